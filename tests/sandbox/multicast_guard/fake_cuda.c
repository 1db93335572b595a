/* A fake CUDA driver (libcuda.so.1) for testing the multicast guard on a machine without a GPU:
 * it exports the entry points the guard sits in front of, plus a few ordinary ones, and counts
 * what reaches it, so a test can show that no route gets a multicast call through and that
 * ordinary calls pass unchanged. Its cuGetProcAddress serves the same table by name and version,
 * as the real driver's does. Its symbols carry a version (fake_cuda.map), so dlvsym can reach them.
 * With FAKE_CUDA_TRACE set it prints each name it is asked for. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int cu_result;
typedef uint64_t cu_flags;
enum { ok = 0, not_found = 500 };

/* Read by the tests (dlsym or ctypes' in_dll): calls that reached this library. */
EXPORT int fake_cuda_multicast_calls;
EXPORT int fake_cuda_calls;

static cu_result multicast(void) {
  __atomic_fetch_add(&fake_cuda_multicast_calls, 1, __ATOMIC_RELAXED);
  return ok;
}
static cu_result counted(void) {
  __atomic_fetch_add(&fake_cuda_calls, 1, __ATOMIC_RELAXED);
  return ok;
}

EXPORT cu_result cuMulticastCreate(void) { return multicast(); }
EXPORT cu_result cuMulticastAddDevice(void) { return multicast(); }
EXPORT cu_result cuMulticastBindMem(void) { return multicast(); }
EXPORT cu_result cuMulticastBindMem_v2(void) { return multicast(); }
EXPORT cu_result cuMulticastBindAddr(void) { return multicast(); }
EXPORT cu_result cuMulticastBindAddr_v2(void) { return multicast(); }
EXPORT cu_result cuMulticastUnbind(void) { return multicast(); }
EXPORT cu_result cuMulticastGetGranularity(void) { return multicast(); }
/* A multicast entry point the guard has no name for (a later driver's). */
EXPORT cu_result cuMulticastFuture(void) { return multicast(); }

EXPORT cu_result cuInit(unsigned flags) {
  (void)flags;
  return counted();
}
EXPORT cu_result cuDriverGetVersion(int* version) {
  *version = 13000;
  return counted();
}
EXPORT cu_result cuDeviceGetCount(int* count) {
  *count = 1;
  return counted();
}
EXPORT cu_result cuDeviceGet(int* device, int ordinal) {
  *device = ordinal;
  return counted();
}
/* 1 for multicast support (as an H200 reports), 1000 + attribute for the others. */
EXPORT cu_result cuDeviceGetAttribute(int* value, int attribute, int device) {
  (void)device;
  *value = attribute == 132 ? 1 : 1000 + attribute;
  return counted();
}

EXPORT cu_result cuGetProcAddress(const char* symbol, void** function, int version, cu_flags flags);
EXPORT cu_result cuGetProcAddress_v2(const char* symbol, void** function, int version, cu_flags flags, int* status);

struct entry {
  const char* name;
  void* function;
};
static const struct entry entries[] = {
    {"cuMulticastCreate", (void*)cuMulticastCreate},
    {"cuMulticastAddDevice", (void*)cuMulticastAddDevice},
    {"cuMulticastBindMem", (void*)cuMulticastBindMem},
    {"cuMulticastBindMem_v2", (void*)cuMulticastBindMem_v2},
    {"cuMulticastBindAddr", (void*)cuMulticastBindAddr},
    {"cuMulticastBindAddr_v2", (void*)cuMulticastBindAddr_v2},
    {"cuMulticastUnbind", (void*)cuMulticastUnbind},
    {"cuMulticastGetGranularity", (void*)cuMulticastGetGranularity},
    {"cuMulticastFuture", (void*)cuMulticastFuture},
    {"cuInit", (void*)cuInit},
    {"cuDriverGetVersion", (void*)cuDriverGetVersion},
    {"cuDeviceGetCount", (void*)cuDeviceGetCount},
    {"cuDeviceGet", (void*)cuDeviceGet},
    {"cuDeviceGetAttribute", (void*)cuDeviceGetAttribute},
};

static cu_result lookup(const char* symbol, void** function, int version) {
  if (getenv("FAKE_CUDA_TRACE")) fprintf(stderr, "fake_cuda: cuGetProcAddress %s %d\n", symbol, version);
  *function = NULL;
  if (strcmp(symbol, "cuGetProcAddress") == 0) {
    *function = version >= 12000 ? (void*)cuGetProcAddress_v2 : (void*)cuGetProcAddress;
    return ok;
  }
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; ++i) {
    if (strcmp(entries[i].name, symbol) == 0) {
      *function = entries[i].function;
      return ok;
    }
  }
  return not_found;
}

EXPORT cu_result cuGetProcAddress(const char* symbol, void** function, int version, cu_flags flags) {
  (void)flags;
  return lookup(symbol, function, version);
}

EXPORT cu_result cuGetProcAddress_v2(const char* symbol, void** function, int version, cu_flags flags, int* status) {
  (void)flags;
  const cu_result r = lookup(symbol, function, version);
  if (status) *status = r == ok ? 0 : 1;
  return r;
}
