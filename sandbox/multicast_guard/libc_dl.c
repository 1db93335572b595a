/* Finds libc's dlsym and dlvsym in its dynamic symbol table (elf_symbols.h), walking the loaded
 * objects with dl_iterate_phdr: the first object after the guard that defines both (libc since
 * glibc 2.34, libdl before), or any other object if none follows it. */
#define _GNU_SOURCE
#include "sandbox/multicast_guard/libc_dl.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <unistd.h>

#include "sandbox/multicast_guard/elf_symbols.h"

struct search {
  uintptr_t self;      /* an address inside the guard */
  int seen_self;
  int any_object;      /* 0: only objects after the guard */
  void* found[2];      /* dlsym, dlvsym */
};

static int visit(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct search* s = data;
  if (object_contains(info, s->self)) {
    s->seen_self = 1;
    return 0;
  }
  if (!s->any_object && !s->seen_self) return 0;
  struct dynamic_tables t;
  if (!read_dynamic_tables(info, &t)) return 0;
  void* found[2] = {defined_function(info, &t, "dlsym"), defined_function(info, &t, "dlvsym")};
  if (!found[0] || !found[1]) return 0;  /* both from one object */
  s->found[0] = found[0];
  s->found[1] = found[1];
  return 1;
}

static void* no_dlsym(void* handle, const char* name) {
  (void)handle;
  (void)name;
  return NULL;
}

static void* no_dlvsym(void* handle, const char* name, const char* version) {
  (void)handle;
  (void)name;
  (void)version;
  return NULL;
}

static int find(struct libc_dl* out) {
  for (int any = 0; any < 2; ++any) {
    struct search s = {.self = (uintptr_t)&find, .any_object = any};
    dl_iterate_phdr(visit, &s);
    if (s.found[0]) {
      out->dlsym = (libc_dlsym_fn)s.found[0];
      out->dlvsym = (libc_dlvsym_fn)s.found[1];
      return 1;
    }
  }
  return 0;
}

const struct libc_dl* libc_dl(void) {
  static struct libc_dl table;
  static int state;  /* 0 unset, 1 set; racing first calls compute the same table */
  if (__atomic_load_n(&state, __ATOMIC_ACQUIRE)) return &table;
  struct libc_dl found;
  if (!find(&found)) {
    /* Before glibc 2.34 dlsym lives in libdl, which may not be loaded yet. */
    dlopen("libdl.so.2", RTLD_NOW | RTLD_GLOBAL);
    if (!find(&found)) {
      static const char message[] =
          "pkagent multicast guard: libc's dlsym was not found; every dynamic symbol lookup fails\n";
      (void)!write(2, message, sizeof message - 1);
      found.dlsym = no_dlsym;
      found.dlvsym = no_dlvsym;
    }
  }
  __atomic_store_n(&table.dlsym, found.dlsym, __ATOMIC_RELAXED);
  __atomic_store_n(&table.dlvsym, found.dlvsym, __ATOMIC_RELAXED);
  __atomic_store_n(&state, 1, __ATOMIC_RELEASE);
  return &table;
}
