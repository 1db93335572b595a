/* Reading a loaded object's dynamic symbol table directly, without the dynamic linker's symbol
 * resolution: the guard exports dlsym and the driver's entry point names, so every lookup through
 * the dynamic linker can end at the guard itself (or at a library in front of the driver that
 * forwards to the guard). Reads the mapped tables only and allocates nothing, so it is safe
 * however early it runs. */
#ifndef PK_MULTICAST_GUARD_ELF_SYMBOLS_H
#define PK_MULTICAST_GUARD_ELF_SYMBOLS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* struct dl_phdr_info */
#endif
#include <link.h>
#include <stdint.h>

struct dynamic_tables {
  const ElfW(Sym) * symbols;
  const char* strings;
  const uint32_t* gnu_hash;
  const uint32_t* sysv_hash;
  const ElfW(Half) * versions;  /* bit 15 set: a hidden (non-default) version */
  const char* soname;           /* DT_SONAME, or NULL */
};

/* The tables of a loaded object; 0 when it has no usable symbol table. */
int read_dynamic_tables(const struct dl_phdr_info* info, struct dynamic_tables* t);

/* The address of the function `name` the object defines (its default version preferred), or NULL. */
void* defined_function(const struct dl_phdr_info* info, const struct dynamic_tables* t, const char* name);

/* Whether `address` lies in one of the object's loaded segments. */
int object_contains(const struct dl_phdr_info* info, uintptr_t address);

#endif
