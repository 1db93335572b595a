/* Written by hand because no library offers a lookup that bypasses the dynamic linker's symbol
 * resolution (see elf_symbols.h). */
#include "sandbox/multicast_guard/elf_symbols.h"

#include <elf.h>
#include <string.h>

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

int object_contains(const struct dl_phdr_info* info, uintptr_t address) {
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

int read_dynamic_tables(const struct dl_phdr_info* info, struct dynamic_tables* t) {
  memset(t, 0, sizeof *t);
  ElfW(Xword) soname = 0;
  int has_soname = 0;
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
        case DT_SONAME: soname = d->d_un.d_val, has_soname = 1; break;  /* an offset in DT_STRTAB */
        default: break;
      }
    }
  }
  if (has_soname && t->strings) t->soname = t->strings + soname;
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

void* defined_function(const struct dl_phdr_info* info, const struct dynamic_tables* t, const char* name) {
  const ElfW(Sym)* s = lookup(t, name);
  return s ? (void*)(info->dlpi_addr + s->st_value) : NULL;
}
