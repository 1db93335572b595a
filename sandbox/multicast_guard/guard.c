/* The entry points: every way a process can get hold of a CUDA driver function ends in one of
 * them once the guard is loaded first.
 *   - direct linking: the guard's exported cuMulticast*, cuGetProcAddress(_v2) and
 *     cuDeviceGetAttribute come before the driver's in the global lookup order;
 *   - dlsym / dlvsym (ctypes, cffi, cudart, Triton): the guard's dlsym and dlvsym replace what a
 *     lookup of a guarded name found, whichever handle it was made on;
 *   - cuGetProcAddress / cuGetProcAddress_v2 (cudart, torch, NCCL, cuda-python get every driver
 *     function this way): the guard's wrappers replace what the driver hands out;
 *   - a pointer to cuGetProcAddress or cuDeviceGetAttribute obtained through any of these is the
 *     guard's wrapper, so chained lookups stay guarded.
 * Unguarded names cost one or two character compares and go to libc as a tail call, so libc sees
 * the original caller (dlsym(RTLD_NEXT, ...) depends on it). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sandbox/multicast_guard/driver_object.h"
#include "sandbox/multicast_guard/evidence.h"
#include "sandbox/multicast_guard/libc_dl.h"
#include "sandbox/multicast_guard/multicast_guard.h"

#define EXPORT __attribute__((visibility("default")))

#if defined(__has_attribute)
#if __has_attribute(musttail)
#define TAIL_CALL __attribute__((musttail))
#endif
#endif
#ifndef TAIL_CALL
#define TAIL_CALL /* GCC at -O2 emits the sibling call; tests/sandbox checks RTLD_NEXT */
#endif

/* The driver ABI the guard needs, from cuda.h (the guard builds without CUDA). */
typedef int cu_result;
typedef unsigned long long cu_handle;
typedef uint64_t cu_flags;
enum { cu_success = 0, cu_error_not_found = 500 };
enum { cu_attribute_multicast_supported = 132 };
enum { cu_get_proc_address_v2_since = 12000 };  /* cuGetProcAddress's version 2 (CUDA 12.0) */
typedef cu_result (*get_proc_v1_fn)(const char*, void**, int, cu_flags);
typedef cu_result (*get_proc_v2_fn)(const char*, void**, int, cu_flags, int*);
typedef cu_result (*device_attribute_fn)(int*, int, int);

/* ---- refusals ------------------------------------------------------------------------------ */

static cu_result refuse(const char* entry) {
  guard_evidence(guard_refused, entry, "call");
  return PK_MULTICAST_GUARD_REFUSAL;
}

EXPORT cu_result cuMulticastCreate(cu_handle* handle, const void* prop) {
  (void)handle, (void)prop;
  return refuse("cuMulticastCreate");
}
EXPORT cu_result cuMulticastAddDevice(cu_handle handle, int device) {
  (void)handle, (void)device;
  return refuse("cuMulticastAddDevice");
}
EXPORT cu_result cuMulticastBindMem(cu_handle handle, size_t offset, cu_handle memory, size_t memory_offset,
                                    size_t size, unsigned long long flags) {
  (void)handle, (void)offset, (void)memory, (void)memory_offset, (void)size, (void)flags;
  return refuse("cuMulticastBindMem");
}
EXPORT cu_result cuMulticastBindAddr(cu_handle handle, size_t offset, uintptr_t address, size_t size,
                                     unsigned long long flags) {
  (void)handle, (void)offset, (void)address, (void)size, (void)flags;
  return refuse("cuMulticastBindAddr");
}
EXPORT cu_result cuMulticastUnbind(cu_handle handle, int device, size_t offset, size_t size) {
  (void)handle, (void)device, (void)offset, (void)size;
  return refuse("cuMulticastUnbind");
}
EXPORT cu_result cuMulticastGetGranularity(size_t* granularity, const void* prop, int option) {
  (void)granularity, (void)prop, (void)option;
  return refuse("cuMulticastGetGranularity");
}
/* Later drivers' versioned binds: their arguments are never read, so any signature is safe. */
EXPORT cu_result cuMulticastBindMem_v2(void) { return refuse("cuMulticastBindMem_v2"); }
EXPORT cu_result cuMulticastBindAddr_v2(void) { return refuse("cuMulticastBindAddr_v2"); }
/* Any other cuMulticast* a driver exports, reached by name. */
static cu_result refuse_unlisted(void) { return refuse("cuMulticast*"); }

struct refusal {
  const char* name;
  void* function;
};
static const struct refusal refusals[] = {
    {"cuMulticastCreate", (void*)cuMulticastCreate},
    {"cuMulticastAddDevice", (void*)cuMulticastAddDevice},
    {"cuMulticastBindMem", (void*)cuMulticastBindMem},
    {"cuMulticastBindAddr", (void*)cuMulticastBindAddr},
    {"cuMulticastUnbind", (void*)cuMulticastUnbind},
    {"cuMulticastGetGranularity", (void*)cuMulticastGetGranularity},
    {"cuMulticastBindMem_v2", (void*)cuMulticastBindMem_v2},
    {"cuMulticastBindAddr_v2", (void*)cuMulticastBindAddr_v2},
};

static void* refusal_for(const char* name) {
  for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; ++i) {
    if (strcmp(refusals[i].name, name) == 0) return refusals[i].function;
  }
  return (void*)refuse_unlisted;
}

/* ---- what the guard calls: the next in line, and the real entry point ---------------------- */

/* Per wrapped entry point, two functions: `outer`, the next definition in line (what the process
 * itself would reach: the driver, or a library in front of it such as Nsight Compute's
 * libcuda-injection.so), and `real_entry`, the definition in libcuda.so.1 itself
 * (driver_object.h). A library in front of the driver may forward its calls to the guard's wrapper
 * (what its own lookup found), so a wrapper re-entered on the same thread while its call to `outer`
 * is under way calls `real_entry` directly: the front library still sees every call once, and the
 * chain ends. */
struct next_in_line {
  const char* name;
  void* outer;       /* the first non-guard definition seen; set once */
  void* real_entry;  /* set once found */
};

static struct next_in_line next_get_proc_v1 = {"cuGetProcAddress", NULL, NULL};
static struct next_in_line next_get_proc_v2 = {"cuGetProcAddress_v2", NULL, NULL};
static struct next_in_line next_attribute = {"cuDeviceGetAttribute", NULL, NULL};

/* Calls to `outer` under way on this thread, per entry point. */
struct depths {
  unsigned get_proc_v1, get_proc_v2, attribute;
};
static __thread struct depths depth;

EXPORT cu_result cuGetProcAddress(const char* symbol, void** function, int version, cu_flags flags);
EXPORT cu_result cuGetProcAddress_v2(const char* symbol, void** function, int version, cu_flags flags, int* status);
EXPORT cu_result cuDeviceGetAttribute(int* value, int attribute, int device);
EXPORT void* dlsym(void* handle, const char* name);
EXPORT void* dlvsym(void* handle, const char* name, const char* version);

static int is_guard_function(const void* p) {
  if (p == (void*)cuGetProcAddress || p == (void*)cuGetProcAddress_v2 || p == (void*)cuDeviceGetAttribute ||
      p == (void*)dlsym || p == (void*)dlvsym || p == (void*)refuse_unlisted) {
    return 1;
  }
  for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; ++i) {
    if (p == refusals[i].function) return 1;
  }
  return 0;
}

/* Keeps the first definition other than the guard's seen for an entry. */
static void remember(void** slot, void* p) {
  void* expected = NULL;
  if (p && !is_guard_function(p)) {
    __atomic_compare_exchange_n(slot, &expected, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  }
}

static void* real_entry_of(struct next_in_line* e) {
  void* p = __atomic_load_n(&e->real_entry, __ATOMIC_ACQUIRE);
  if (p) return p;
  remember(&e->real_entry, driver_definition(e->name));
  return __atomic_load_n(&e->real_entry, __ATOMIC_ACQUIRE);
}

/* The next definition in line, for a call that reached the guard's export directly when no
 * lookup has handed one out yet: the next definition after the guard (a driver, or a library in
 * front of it, linked by the program), else the one behind dlopen("libcuda.so.1") (a driver that
 * is a dependency of a library loaded with RTLD_LOCAL), else the driver's own. */
static void* outer_of(struct next_in_line* e) {
  void* p = __atomic_load_n(&e->outer, __ATOMIC_ACQUIRE);
  if (p) return p;
  p = libc_dl()->dlsym(RTLD_NEXT, e->name);
  if (!p || is_guard_function(p)) {
    p = NULL;
    void* library = dlopen(PK_CUDA_DRIVER_SONAME, RTLD_NOLOAD | RTLD_LAZY);
    if (library) {
      p = libc_dl()->dlsym(library, e->name);
      dlclose(library);
    }
  }
  remember(&e->outer, p && !is_guard_function(p) ? p : real_entry_of(e));
  return __atomic_load_n(&e->outer, __ATOMIC_ACQUIRE);
}

/* What a wrapper calls now: `outer`, or the real entry point when re-entered from `outer`
 * (*through_outer then 0) or when `outer` is the real entry point. NULL: nothing to call. */
static void* callee(struct next_in_line* e, unsigned depth_now, int* through_outer) {
  *through_outer = 0;
  if (depth_now > 0) return real_entry_of(e);
  void* outer = outer_of(e);
  *through_outer = outer && outer != real_entry_of(e);
  return outer;
}

/* ---- guarded names ------------------------------------------------------------------------- */

static int starts_with(const char* s, const char* prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

static inline int is_guarded_name(const char* n) {
  if (!n) return 0;
  if (n[0] == 'c') {
    return n[1] == 'u' &&
           (starts_with(n, "cuMulticast") || starts_with(n, "cuGetProcAddress") || strcmp(n, "cuDeviceGetAttribute") == 0);
  }
  if (n[0] == 'd') return strcmp(n, "dlsym") == 0 || strcmp(n, "dlvsym") == 0;
  return 0;
}

/* What a lookup of guarded `name` hands out instead of `found` (never NULL here). `proc_version`
 * is the CUDA version asked of cuGetProcAddress, or -1 for dlsym/dlvsym, where the exported name
 * itself says which cuGetProcAddress it is. NULL: hidden (a cuGetProcAddress the guard does not
 * know the signature of, so cannot wrap). */
static void* guarded(const char* name, void* found, int proc_version, const char* route) {
  void* mine = NULL;
  if (starts_with(name, "cuMulticast")) {
    mine = refusal_for(name);
  } else if (strcmp(name, "cuDeviceGetAttribute") == 0) {
    remember(&next_attribute.outer, found);
    mine = (void*)cuDeviceGetAttribute;
  } else if (strcmp(name, "cuGetProcAddress") == 0 && proc_version >= 0) {
    const int v2 = proc_version >= cu_get_proc_address_v2_since;
    remember(v2 ? &next_get_proc_v2.outer : &next_get_proc_v1.outer, found);
    mine = v2 ? (void*)cuGetProcAddress_v2 : (void*)cuGetProcAddress;
  } else if (strcmp(name, "cuGetProcAddress") == 0) {
    remember(&next_get_proc_v1.outer, found);
    mine = (void*)cuGetProcAddress;
  } else if (strcmp(name, "cuGetProcAddress_v2") == 0) {
    remember(&next_get_proc_v2.outer, found);
    mine = (void*)cuGetProcAddress_v2;
  } else if (strcmp(name, "dlsym") == 0) {
    return (void*)dlsym;  /* libc's own would be an unguarded way back */
  } else if (strcmp(name, "dlvsym") == 0) {
    return (void*)dlvsym;
  }
  if (mine) guard_evidence(guard_resolved, name, route);
  return mine;
}

/* ---- the wrappers -------------------------------------------------------------------------- */

/* Each wrapper's answer is filtered the same way whichever function gave it (a library in front of
 * the driver, or the driver itself). */

EXPORT cu_result cuGetProcAddress(const char* symbol, void** function, int version, cu_flags flags) {
  int through_outer;
  const get_proc_v1_fn next = (get_proc_v1_fn)callee(&next_get_proc_v1, depth.get_proc_v1, &through_outer);
  if (!next) return cu_error_not_found;
  depth.get_proc_v1 += through_outer;
  const cu_result r = next(symbol, function, version, flags);
  depth.get_proc_v1 -= through_outer;
  if (r != cu_success || !function || !*function || !is_guarded_name(symbol)) return r;
  *function = guarded(symbol, *function, version, "cuGetProcAddress");
  return *function ? r : cu_error_not_found;
}

EXPORT cu_result cuGetProcAddress_v2(const char* symbol, void** function, int version, cu_flags flags, int* status) {
  int through_outer;
  const get_proc_v2_fn next = (get_proc_v2_fn)callee(&next_get_proc_v2, depth.get_proc_v2, &through_outer);
  if (!next) return cu_error_not_found;
  depth.get_proc_v2 += through_outer;
  const cu_result r = next(symbol, function, version, flags, status);
  depth.get_proc_v2 -= through_outer;
  if (r != cu_success || !function || !*function || !is_guarded_name(symbol)) return r;
  *function = guarded(symbol, *function, version, "cuGetProcAddress_v2");
  if (*function) return r;
  if (status) *status = 1;  /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
  return cu_error_not_found;
}

EXPORT cu_result cuDeviceGetAttribute(int* value, int attribute, int device) {
  int through_outer;
  const device_attribute_fn next = (device_attribute_fn)callee(&next_attribute, depth.attribute, &through_outer);
  if (!next) return cu_error_not_found;
  if (attribute != cu_attribute_multicast_supported && !through_outer) TAIL_CALL return next(value, attribute, device);
  depth.attribute += through_outer;
  const cu_result r = next(value, attribute, device);
  depth.attribute -= through_outer;
  if (r == cu_success && value && attribute == cu_attribute_multicast_supported) {
    *value = 0;
    guard_evidence(guard_masked, "CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED", "cuDeviceGetAttribute");
  }
  return r;
}

static __attribute__((noinline)) void* guarded_dlsym(void* handle, const char* name) {
  /* A guarded name's RTLD_NEXT is counted from the guard rather than from the caller: it only
   * ever finds a driver's definition or the guard's own, both of which end up guarded. */
  void* found = libc_dl()->dlsym(handle, name);
  return found ? guarded(name, found, -1, "dlsym") : NULL;
}

static __attribute__((noinline)) void* guarded_dlvsym(void* handle, const char* name, const char* version) {
  void* found = libc_dl()->dlvsym(handle, name, version);
  return found ? guarded(name, found, -1, "dlvsym") : NULL;
}

EXPORT void* dlsym(void* handle, const char* name) {
  if (__builtin_expect(is_guarded_name(name), 0)) return guarded_dlsym(handle, name);
  const libc_dlsym_fn next = libc_dl()->dlsym;
  TAIL_CALL return next(handle, name);
}

EXPORT void* dlvsym(void* handle, const char* name, const char* version) {
  if (__builtin_expect(is_guarded_name(name), 0)) return guarded_dlvsym(handle, name, version);
  const libc_dlvsym_fn next = libc_dl()->dlvsym;
  TAIL_CALL return next(handle, name, version);
}
