/* Drives every route to a CUDA driver entry point against the fake driver (fake_cuda.c) and
 * checks the outcome expected in its mode:
 *   guard_probe guarded     every multicast call returns 801 and none reaches the fake; the
 *                           multicast attribute reads 0; everything else passes unchanged
 *   guard_probe unguarded   the control: the same calls all reach the fake (so each route is real)
 *   guard_probe guarded --child-with-empty-environment
 *                           also runs itself again with an empty environment, expecting "guarded"
 *   guard_probe MODE --injection LIB
 *                           opens LIB (fake_injection.c, a library in front of the driver that
 *                           forwards to what its own lookup finds) where it would open
 *                           libcuda.so.1, as Nsight Compute answers a process under ncu, looks the
 *                           driver's entry points up there first, and also checks that the calls
 *                           went through LIB
 * Prints "ok <route>" or "FAIL <route>: <why>" per check, then "pid <pid>", and exits 0 only if
 * every check held. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int (*call_fn)(void);
typedef int (*get_proc_v1_fn)(const char*, void**, int, uint64_t);
typedef int (*get_proc_v2_fn)(const char*, void**, int, uint64_t, int*);
typedef int (*attribute_fn)(int*, int, int);

/* Linked directly against the fake (their arguments are never read by either side). */
int cuMulticastCreate(void);
int cuMulticastAddDevice(void);
int cuMulticastBindMem(void);
int cuMulticastBindMem_v2(void);
int cuMulticastBindAddr(void);
int cuMulticastBindAddr_v2(void);
int cuMulticastUnbind(void);
int cuMulticastGetGranularity(void);
int cuInit(unsigned flags);
int cuDeviceGetAttribute(int* value, int attribute, int device);
int cuGetProcAddress_v2(const char* symbol, void** function, int version, uint64_t flags, int* status);
extern int fake_cuda_multicast_calls;
extern int fake_cuda_calls;
int next_a_dlsym(void);
int next_a_dlvsym(void);

enum { refusal = 801, multicast_attribute = 132 };

static const char* const multicast_names[] = {
    "cuMulticastCreate",     "cuMulticastAddDevice",   "cuMulticastBindMem",        "cuMulticastBindMem_v2",
    "cuMulticastBindAddr",   "cuMulticastBindAddr_v2", "cuMulticastUnbind",         "cuMulticastGetGranularity",
    "cuMulticastFuture",
};
enum { multicast_count = sizeof multicast_names / sizeof multicast_names[0] };

static int guarded_mode;
static const char* injection;  /* a library in front of the driver, or NULL */
static int failures;

static void check(int held, const char* route, const char* name, const char* why) {
  if (held) {
    printf("ok %s %s\n", route, name);
  } else {
    printf("FAIL %s %s: %s\n", route, name, why);
    ++failures;
  }
}

/* One multicast call through `f`: refused with nothing reaching the fake, or (control) reached. */
static void multicast_call(const char* route, const char* name, void* f) {
  if (!f) {
    check(0, route, name, "lookup returned NULL");
    return;
  }
  const int before = fake_cuda_multicast_calls;
  const int r = ((call_fn)f)();
  const int reached = fake_cuda_multicast_calls - before;
  if (guarded_mode) {
    check(r == refusal && reached == 0, route, name, reached ? "reached the driver" : "not refused with 801");
  } else {
    check(r == 0 && reached == 1, route, name, "did not reach the driver");
  }
}

static void attribute_check(const char* route, void* f) {
  int value = -1;
  const int r = f ? ((attribute_fn)f)(&value, multicast_attribute, 0) : -1;
  check(r == 0 && value == (guarded_mode ? 0 : 1), route, "MULTICAST_SUPPORTED",
        guarded_mode ? "not reported as 0" : "not the driver's 1");
  value = -1;
  const int r2 = f ? ((attribute_fn)f)(&value, 7, 0) : -1;
  check(r2 == 0 && value == 1007, route, "attribute 7", "an ordinary attribute changed");
}

static void pass_through(const char* route, void* f) {
  const int before = fake_cuda_calls;
  const int r = f ? ((int (*)(unsigned))f)(0) : -1;
  check(r == 0 && fake_cuda_calls == before + 1, route, "cuInit", "did not reach the driver unchanged");
}

static void* via_v1(get_proc_v1_fn get, const char* name, int version) {
  void* f = NULL;
  return get && get(name, &f, version, 0) == 0 ? f : NULL;
}

static void* via_v2(get_proc_v2_fn get, const char* name, int version) {
  void* f = NULL;
  int status = -1;
  return get && get(name, &f, version, 0, &status) == 0 ? f : NULL;
}

static int run_routes(void) {
  void* driver = dlopen(injection ? injection : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  if (!driver || !libc) {
    printf("FAIL setup: %s\n", dlerror());
    return 1;
  }
  void* (*libc_dlsym)(void*, const char*) = (void* (*)(void*, const char*))dlsym(libc, "dlsym");
  /* Looked up before anything calls them, so that what is in front of the driver is in line. */
  get_proc_v1_fn v1 = (get_proc_v1_fn)dlsym(driver, "cuGetProcAddress");
  get_proc_v2_fn v2 = (get_proc_v2_fn)dlsym(driver, "cuGetProcAddress_v2");
  void* attribute = dlsym(driver, "cuDeviceGetAttribute");

  call_fn linked[] = {cuMulticastCreate,      cuMulticastAddDevice, cuMulticastBindMem,
                      cuMulticastBindMem_v2,  cuMulticastBindAddr,  cuMulticastBindAddr_v2,
                      cuMulticastUnbind,      cuMulticastGetGranularity};
  for (size_t i = 0; i < sizeof linked / sizeof linked[0]; ++i) multicast_call("linked", multicast_names[i], (void*)linked[i]);

  for (int i = 0; i < multicast_count; ++i) {
    const char* name = multicast_names[i];
    multicast_call("dlsym", name, dlsym(driver, name));
    multicast_call("dlvsym", name, dlvsym(driver, name, "PK_FAKE_CUDA"));
    multicast_call("dlsym-RTLD_DEFAULT", name, dlsym(RTLD_DEFAULT, name));
    multicast_call("libc-dlsym-looked-up", name, libc_dlsym ? libc_dlsym(driver, name) : NULL);
    multicast_call("cuGetProcAddress", name, via_v1(v1, name, 12010));
    multicast_call("cuGetProcAddress_v2", name, via_v2(v2, name, 12010));
    multicast_call("cuGetProcAddress_v2-linked", name, via_v2(cuGetProcAddress_v2, name, 12010));
    /* cuGetProcAddress handed out by cuGetProcAddress: both versions. */
    multicast_call("chained-v2", name, via_v2((get_proc_v2_fn)via_v2(v2, "cuGetProcAddress", 12000), name, 12010));
    multicast_call("chained-v1", name, via_v1((get_proc_v1_fn)via_v1(v1, "cuGetProcAddress", 11030), name, 12010));
  }
  /* A name assembled at run time, as code hiding from a text scan would. */
  char built[32];
  snprintf(built, sizeof built, "%s%s%s", "cuMul", "ticast", "Create");
  multicast_call("dlsym-built-name", built, dlsym(driver, built));
  multicast_call("dlsym-RTLD_NEXT", "cuMulticastCreate", dlsym(RTLD_NEXT, "cuMulticastCreate"));

  attribute_check("linked", (void*)cuDeviceGetAttribute);
  attribute_check("dlsym", attribute);
  attribute_check("cuGetProcAddress_v2", via_v2(v2, "cuDeviceGetAttribute", 2000));
  attribute_check("cuGetProcAddress", via_v1(v1, "cuDeviceGetAttribute", 2000));

  pass_through("linked", (void*)cuInit);
  pass_through("dlsym", dlsym(driver, "cuInit"));
  pass_through("cuGetProcAddress", via_v1(v1, "cuInit", 2000));
  pass_through("cuGetProcAddress_v2", via_v2(v2, "cuInit", 2000));

  check(next_a_dlsym() == 2, "RTLD_NEXT", "dlsym", "found the wrong definition");
  check(next_a_dlvsym() == 2, "RTLD_NEXT", "dlvsym", "found the wrong definition");
  check(dlsym(driver, "no_such_symbol_anywhere") == NULL, "dlsym", "missing symbol", "found something");
  if (injection) {
    const int* through = (const int*)dlsym(driver, "fake_injection_calls");
    check(through && *through > 0, "injection", "calls through it", "the library in front of the driver was bypassed");
  }
  return 0;
}

static int run_child(const char* self) {
  fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    char* const argv[] = {(char*)self, "guarded", NULL};
    char* const envp[] = {NULL};
    execve(self, argv, envp);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char** argv) {
  int child = 0, usage = argc < 2 || (strcmp(argv[1], "guarded") != 0 && strcmp(argv[1], "unguarded") != 0);
  for (int i = 2; i < argc && !usage; ++i) {
    if (strcmp(argv[i], "--child-with-empty-environment") == 0) {
      child = 1;
    } else if (strcmp(argv[i], "--injection") == 0 && i + 1 < argc) {
      injection = argv[++i];
    } else {
      usage = 1;
    }
  }
  if (usage) {
    fprintf(stderr, "usage: %s guarded|unguarded [--child-with-empty-environment] [--injection LIB]\n", argv[0]);
    return 2;
  }
  guarded_mode = strcmp(argv[1], "guarded") == 0;
  if (run_routes() != 0) return 1;
  if (child) {
    check(run_child("/proc/self/exe") == 0, "child-with-empty-environment", "all routes", "a route was not guarded");
  }
  printf("pid %d\n", (int)getpid());
  return failures == 0 ? 0 : 1;
}
