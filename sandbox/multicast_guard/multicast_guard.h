/* The multicast guard's contract with whoever runs it and whoever reads its evidence (C and C++).
 *
 * libpk_multicast_guard.so, loaded first into a process (LD_PRELOAD or /etc/ld.so.preload),
 * refuses NVLink multicast at the CUDA driver's entry points: cuMulticast* return
 * PK_MULTICAST_GUARD_REFUSAL instead of reaching the driver, and
 * CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED reads 0. See README.md in this directory.
 *
 * Evidence: one line per event, appended to PK_MULTICAST_GUARD_LOG_DEFAULT where that file exists
 * (inside a sandbox that bound it there: every process reports to it, one started with an empty
 * environment or one that set the variable included), else to the file named by
 * PK_MULTICAST_GUARD_LOG_ENV (created if needed), else nowhere. Each line is
 *
 *   <event> <entry> route=<route> pid=<pid> comm=<comm>
 *
 * with event one of
 *   refused   a multicast entry point was called and refused (route=call): the verdict's evidence
 *   resolved  a guarded entry point was looked up and the guard's own was handed out (route=dlsym,
 *             dlvsym, cuGetProcAddress or cuGetProcAddress_v2); libraries do this at start-up
 *   masked    CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED was queried and reported as 0
 * entry is a driver entry point name (or the attribute's), comm the process name (spaces become
 * '_'). "resolved" and "masked" lines are written once per process, entry and route; "refused"
 * lines for the first PK_MULTICAST_GUARD_REFUSALS_PER_ENTRY calls of each entry point in a process
 * (every call is refused; a loop of them cannot flood the log). */
#ifndef PK_MULTICAST_GUARD_H
#define PK_MULTICAST_GUARD_H

#define PK_MULTICAST_GUARD_LOG_ENV "PKAGENT_MULTICAST_GUARD_LOG"
#define PK_MULTICAST_GUARD_LOG_DEFAULT "/.pkagent/multicast_guard.log"
/* CUDA_ERROR_NOT_SUPPORTED: what the driver itself returns where multicast is unavailable, so
 * libraries that probe take their fallback path. */
#define PK_MULTICAST_GUARD_REFUSAL 801
#define PK_MULTICAST_GUARD_REFUSALS_PER_ENTRY 4

#endif
