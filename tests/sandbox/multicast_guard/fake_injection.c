/* A library in front of the driver, as Nsight Compute's libcuda-injection.so is under ncu: it
 * exports cuGetProcAddress, cuGetProcAddress_v2 and cuDeviceGetAttribute, counts each call, and
 * forwards it to the definition it finds itself, with dlsym on dlopen("libcuda.so.1"). Under the
 * guard that lookup answers with the guard's wrapper, which must not call back in here forever.
 * guard_probe --injection opens this library in place of libcuda.so.1, as a process under ncu
 * gets it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

typedef int cu_result;
typedef uint64_t cu_flags;
typedef cu_result (*get_proc_v1_fn)(const char*, void**, int, cu_flags);
typedef cu_result (*get_proc_v2_fn)(const char*, void**, int, cu_flags, int*);
typedef cu_result (*attribute_fn)(int*, int, int);
enum { not_found = 500 };

/* Read by the probe: calls that went through this library. */
EXPORT int fake_injection_calls;

static void* next(const char* name) {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  void* f = driver ? dlsym(driver, name) : NULL;
  if (driver) dlclose(driver);
  __atomic_fetch_add(&fake_injection_calls, 1, __ATOMIC_RELAXED);
  return f;
}

EXPORT cu_result cuGetProcAddress(const char* symbol, void** function, int version, cu_flags flags) {
  const get_proc_v1_fn f = (get_proc_v1_fn)next("cuGetProcAddress");
  return f ? f(symbol, function, version, flags) : not_found;
}

EXPORT cu_result cuGetProcAddress_v2(const char* symbol, void** function, int version, cu_flags flags, int* status) {
  const get_proc_v2_fn f = (get_proc_v2_fn)next("cuGetProcAddress_v2");
  return f ? f(symbol, function, version, flags, status) : not_found;
}

EXPORT cu_result cuDeviceGetAttribute(int* value, int attribute, int device) {
  const attribute_fn f = (attribute_fn)next("cuDeviceGetAttribute");
  return f ? f(value, attribute, device) : not_found;
}
