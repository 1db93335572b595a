/* libc's own dlsym and dlvsym. The guard exports functions of those names, and an exported
 * definition shadows libc's for every dynamic lookup in the process, the guard's own included
 * (there is no public "next definition of dlsym" that does not go through dlsym or dlvsym), so
 * they are found in libc's dynamic symbol table directly. */
#ifndef PK_MULTICAST_GUARD_LIBC_DL_H
#define PK_MULTICAST_GUARD_LIBC_DL_H

typedef void* (*libc_dlsym_fn)(void* handle, const char* name);
typedef void* (*libc_dlvsym_fn)(void* handle, const char* name, const char* version);

struct libc_dl {
  libc_dlsym_fn dlsym;
  libc_dlvsym_fn dlvsym;
};

/* Found once, on first use; never NULL members (a process where they cannot be found gets
 * functions that fail every lookup, after one message on stderr). */
const struct libc_dl* libc_dl(void);

#endif
