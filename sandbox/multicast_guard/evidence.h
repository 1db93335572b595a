/* The guard's evidence lines (format in multicast_guard.h). */
#ifndef PK_MULTICAST_GUARD_EVIDENCE_H
#define PK_MULTICAST_GUARD_EVIDENCE_H

enum guard_event { guard_refused, guard_resolved, guard_masked };

/* Appends one line for `event` on `entry` reached through `route`; a refusal is also told on
 * stderr. Keeps errno; never fails (evidence that cannot be written is dropped). */
void guard_evidence(enum guard_event event, const char* entry, const char* route);

#endif
