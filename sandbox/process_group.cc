#include "sandbox/process_group.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace pk::sandbox {

namespace {

// State and process group of one /proc/PID/stat: "pid (comm) S ppid pgrp ...", comm may hold
// spaces and parentheses, so the fields are counted from the last ')'.
bool live_member(const char* pid, pid_t pgid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%s/stat", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // gone meanwhile
  char buf[512];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');
  if (!p || p[1] != ' ' || !p[2]) return false;
  const char state = p[2];
  char* end = nullptr;
  (void)std::strtol(p + 3, &end, 10);            // ppid
  const long group = std::strtol(end, &end, 10);  // pgrp
  return state != 'Z' && state != 'X' && group == pgid;
}

}  // namespace

bool group_has_live_process(pid_t pgid) {
  DIR* dir = ::opendir("/proc");
  if (!dir) return false;
  bool found = false;
  while (const dirent* e = ::readdir(dir)) {
    if (!std::isdigit(static_cast<unsigned char>(e->d_name[0]))) continue;
    // getpgid is one cheap system call; the stat file, whose formatting costs far more, is read
    // only for the group's members (to tell a zombie from a live one).
    if (::getpgid(static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10))) != pgid) continue;
    if (live_member(e->d_name, pgid)) {
      found = true;
      break;
    }
  }
  ::closedir(dir);
  return found;
}

bool wait_for_group_exit(pid_t pgid, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (auto pause = std::chrono::microseconds(200);; pause = std::min(pause * 2, std::chrono::microseconds(20000))) {
    if (!group_has_live_process(pgid)) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(pause);
  }
}

}  // namespace pk::sandbox
