/* Finds libc's dlsym and dlvsym in its dynamic symbol table (GNU or SysV hash), walking the
 * loaded objects with dl_iterate_phdr: the first object after the guard that defines both (libc
 * since glibc 2.34, libdl before), or any other object if none follows it. Written by hand because
 * no library offers a lookup that bypasses the dynamic linker's symbol resolution; it only reads
 * the mapped tables and allocates nothing, so it is safe however early it runs. */
#define _GNU_SOURCE
#include "sandbox/multicast_guard/libc_dl.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

struct dynamic_tables {
  const ElfW(Sym) * symbols;
  const char* strings;
  const uint32_t* gnu_hash;
  const uint32_t* sysv_hash;
  const ElfW(Half) * versions;  /* bit 15 set: a hidden (non-default) version */
};

struct search {
  uintptr_t self;      /* an address inside the guard */
  int seen_self;
  int any_object;      /* 0: only objects after the guard */
  void* found[2];      /* dlsym, dlvsym */
};

static const char* const wanted[2] = {"dlsym", "dlvsym"};

static uint32_t gnu_hash(const char* s) {
  uint32_t h = 5381;
  for (; *s; ++s) h = h * 33 + (unsigned char)*s;
  return h;
}

static uint32_t sysv_hash(const char* s) {
  uint32_t h = 0;
  for (; *s; ++s) {
    h = (h << 4) + (unsigned char)*s;
    const uint32_t g = h & 0xf0000000u;
    if (g) h ^= g >> 24;
    h &= ~g;
  }
  return h;
}

static int contains(const struct dl_phdr_info* info, uintptr_t address) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD && address - (info->dlpi_addr + ph->p_vaddr) < ph->p_memsz) return 1;
  }
  return 0;
}

/* glibc relocates the dynamic section's pointers in place on most architectures, not on all (nor
 * for the vDSO): a value below the load address is still an offset. */
static const void* dynamic_pointer(const struct dl_phdr_info* info, ElfW(Addr) value) {
  return (const void*)(value < info->dlpi_addr ? info->dlpi_addr + value : value);
}

static int read_tables(const struct dl_phdr_info* info, struct dynamic_tables* t) {
  memset(t, 0, sizeof *t);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
    for (const ElfW(Dyn)* d = (const ElfW(Dyn)*)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr); d->d_tag != DT_NULL;
         ++d) {
      switch (d->d_tag) {
        case DT_SYMTAB: t->symbols = dynamic_pointer(info, d->d_un.d_ptr); break;
        case DT_STRTAB: t->strings = dynamic_pointer(info, d->d_un.d_ptr); break;
        case DT_GNU_HASH: t->gnu_hash = dynamic_pointer(info, d->d_un.d_ptr); break;
        case DT_HASH: t->sysv_hash = dynamic_pointer(info, d->d_un.d_ptr); break;
        case DT_VERSYM: t->versions = dynamic_pointer(info, d->d_un.d_ptr); break;
        default: break;
      }
    }
  }
  return t->symbols && t->strings && (t->gnu_hash || t->sysv_hash);
}

/* ELF64_ST_TYPE and ELF32_ST_TYPE are the same mask. */
static int matches(const struct dynamic_tables* t, uint32_t index, const char* name) {
  const ElfW(Sym)* s = &t->symbols[index];
  return s->st_shndx != SHN_UNDEF && ELF64_ST_TYPE(s->st_info) == STT_FUNC && strcmp(t->strings + s->st_name, name) == 0;
}

/* The defined function named `name`, preferring its default version. */
static const ElfW(Sym) * lookup(const struct dynamic_tables* t, const char* name) {
  const ElfW(Sym)* hidden = NULL;
  if (t->gnu_hash) {
    const uint32_t buckets = t->gnu_hash[0], first = t->gnu_hash[1], bloom_words = t->gnu_hash[2];
    const uint32_t* bucket = (const uint32_t*)((const ElfW(Addr)*)(t->gnu_hash + 4) + bloom_words);
    const uint32_t* chain = bucket + buckets;
    const uint32_t h = gnu_hash(name);
    uint32_t i = buckets ? bucket[h % buckets] : 0;
    if (i < first) return NULL;
    for (;; ++i) {
      const uint32_t h2 = chain[i - first];
      if ((h | 1) == (h2 | 1) && matches(t, i, name)) {
        if (!t->versions || !(t->versions[i] & 0x8000)) return &t->symbols[i];
        if (!hidden) hidden = &t->symbols[i];
      }
      if (h2 & 1) break;
    }
    return hidden;
  }
  const uint32_t buckets = t->sysv_hash[0];
  const uint32_t* bucket = t->sysv_hash + 2;
  const uint32_t* chain = bucket + buckets;
  for (uint32_t i = buckets ? bucket[sysv_hash(name) % buckets] : 0; i != 0; i = chain[i]) {
    if (!matches(t, i, name)) continue;
    if (!t->versions || !(t->versions[i] & 0x8000)) return &t->symbols[i];
    if (!hidden) hidden = &t->symbols[i];
  }
  return hidden;
}

static int visit(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct search* s = data;
  if (contains(info, s->self)) {
    s->seen_self = 1;
    return 0;
  }
  if (!s->any_object && !s->seen_self) return 0;
  struct dynamic_tables t;
  if (!read_tables(info, &t)) return 0;
  const ElfW(Sym)* found[2] = {lookup(&t, wanted[0]), lookup(&t, wanted[1])};
  if (!found[0] || !found[1]) return 0;  /* both from one object */
  for (int i = 0; i < 2; ++i) s->found[i] = (void*)(info->dlpi_addr + found[i]->st_value);
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
