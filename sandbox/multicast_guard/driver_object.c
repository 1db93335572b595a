#define _GNU_SOURCE
#include "sandbox/multicast_guard/driver_object.h"

#include <link.h>
#include <string.h>

#include "sandbox/multicast_guard/elf_symbols.h"

struct search {
  const char* name;
  void* found;
};

static int visit(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct search* s = data;
  struct dynamic_tables t;
  if (!read_dynamic_tables(info, &t) || !t.soname || strcmp(t.soname, PK_CUDA_DRIVER_SONAME) != 0) return 0;
  s->found = defined_function(info, &t, s->name);
  return 1;  /* one driver per process: the first one loaded */
}

void* driver_definition(const char* name) {
  struct search s = {.name = name};
  dl_iterate_phdr(visit, &s);
  return s.found;
}
