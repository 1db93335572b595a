/* With next_b.c: dlsym(RTLD_NEXT, ...) made from this library must find next_b's definition, as
 * without the guard (the guard hands unguarded lookups to libc as a tail call, so libc still sees
 * this library as the caller). */
#define _GNU_SOURCE
#include <dlfcn.h>

__attribute__((visibility("default"))) int next_target(void) { return 1; }

typedef int (*target_fn)(void);

__attribute__((visibility("default"))) int next_a_dlsym(void) {
  target_fn f = (target_fn)dlsym(RTLD_NEXT, "next_target");
  return f ? f() : 0;
}

__attribute__((visibility("default"))) int next_a_dlvsym(void) {
  /* next_b has no version information, so any version name accepts its definition. (The dlsym
   * check above is the one that fails when the guard loses its tail call to libc.) */
  target_fn f = (target_fn)dlvsym(RTLD_NEXT, "next_target", "PK_TEST_1");
  return f ? f() : 0;
}
