/* Evidence lines: opened, appended and closed per line (events are rare: a few lookups at a
 * library's start-up, and refusals), so no descriptor of the guard's lingers in the process or
 * its children, and a short line lands whole even when ranks append at once (O_APPEND). */
#define _GNU_SOURCE
#include "sandbox/multicast_guard/evidence.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/multicast_guard/multicast_guard.h"

enum { seen_slots = 512, name_chars = 96 };

static const char* const event_names[] = {"refused", "resolved", "masked"};

/* Names come from the caller (a dlsym argument): only [A-Za-z0-9_*.], at most name_chars. */
static void copy_name(char* out, const char* name) {
  size_t n = 0;
  for (; name && name[n] && n < name_chars; ++n) {
    const char c = name[n];
    const int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                      c == '*' || c == '.';
    out[n] = plain ? c : '?';
  }
  if (n == 0) out[n++] = '-';
  out[n] = '\0';
}

static void read_comm(char* out, size_t size) {
  ssize_t n = -1;
  const int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    n = read(fd, out, size - 1);
    close(fd);
  }
  if (n <= 0) n = 0;
  out[n] = '\0';
  for (char* c = out; *c; ++c) {
    if (*c == '\n') *c = '\0';
    else if (*c == ' ' || *c == '\t' || *c == '=') *c = '_';
  }
  if (!out[0]) strcpy(out, "-");
}

/* True the first time this process reports `key` (later ones, and any once the table is full,
 * are dropped: a loop of lookups cannot flood the log). */
static int first_time(const char* event, const char* entry, const char* route) {
  static uint64_t seen[seen_slots];
  uint64_t h = 1469598103934665603ull;
  for (const char* parts[] = {event, entry, route}, **p = parts; p < parts + 3; ++p) {
    for (const char* c = *p; *c; ++c) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
  }
  if (h == 0) h = 1;
  for (unsigned i = 0; i < seen_slots; ++i) {
    uint64_t* slot = &seen[(h + i) % seen_slots];
    uint64_t expected = 0;
    if (__atomic_compare_exchange_n(slot, &expected, h, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return 1;
    if (expected == h) return 0;
  }
  return 0;
}

/* The sandbox's log first: it exists only where the sandbox bound it, and there a variable set
 * inside cannot send the evidence elsewhere. */
static void append(const char* line, size_t length) {
  const int flags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
  int fd = open(PK_MULTICAST_GUARD_LOG_DEFAULT, flags);
  const char* path = getenv(PK_MULTICAST_GUARD_LOG_ENV);
  if (fd < 0 && path && *path) fd = open(path, flags | O_CREAT, 0644);
  if (fd < 0) return;
  (void)!write(fd, line, length);
  close(fd);
}

void guard_evidence(enum guard_event event, const char* entry, const char* route) {
  const int saved_errno = errno;
  char name[name_chars + 1], comm[32], line[256];
  copy_name(name, entry);
  int report = 0;
  if (event == guard_refused) {
    char nth[8];
    for (int i = 0; i < PK_MULTICAST_GUARD_REFUSALS_PER_ENTRY && !report; ++i) {
      snprintf(nth, sizeof nth, "#%d", i);
      report = first_time(event_names[event], name, nth);
    }
  } else {
    report = first_time(event_names[event], name, route);
  }
  if (!report) {
    errno = saved_errno;
    return;
  }
  read_comm(comm, sizeof comm);
  const int pid = (int)getpid();
  int n = snprintf(line, sizeof line, "%s %s route=%s pid=%d comm=%s\n", event_names[event], name, route, pid, comm);
  if (n > 0 && (size_t)n < sizeof line) append(line, (size_t)n);
  if (event == guard_refused) {
    n = snprintf(line, sizeof line,
                 "pkagent: %s refused: NVLink multicast is forbidden on this host (pid %d); it returned "
                 "CUDA_ERROR_NOT_SUPPORTED\n",
                 name, pid);
    if (n > 0 && (size_t)n < sizeof line) (void)!write(2, line, (size_t)n);
  }
  errno = saved_errno;
}
