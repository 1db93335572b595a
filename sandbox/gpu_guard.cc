#include "sandbox/gpu_guard.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "sandbox/multicast_guard/multicast_guard.h"

namespace pk::sandbox {

namespace fs = std::filesystem;

fs::path multicast_guard_library() { return PK_MULTICAST_GUARD_LIBRARY; }

fs::path guard_log_inside() { return PK_MULTICAST_GUARD_LOG_DEFAULT; }

env_map gpu_guard_env(const fs::path& log_file, const std::string& ld_preload, const fs::path& library) {
  env_map env = forced_environment();
  env["LD_PRELOAD"] = library.string() + (ld_preload.empty() ? "" : ":" + ld_preload);
  if (!log_file.empty()) env[PK_MULTICAST_GUARD_LOG_ENV] = log_file.string();
  return env;
}

bind_mount guard_log_bind(const fs::path& host_file) {
  std::ofstream out(host_file, std::ios::trunc);
  if (!out) throw sandbox_error(fmt::format("cannot create the multicast guard's log {}", host_file.string()));
  return {host_file, guard_log_inside(), true};
}

namespace {

// "<event> <entry> route=<r> pid=<p> comm=<c>", exactly; anything else is not the guard's.
bool parse_line(const std::string& line, guard_event& e) {
  std::istringstream in(line);
  std::string route, pid, comm, extra;
  if (!(in >> e.event >> e.entry >> route >> pid >> comm) || (in >> extra)) return false;
  if (e.event != "refused" && e.event != "resolved" && e.event != "masked") return false;
  auto value = [](const std::string& field, const char* key, std::string& out) {
    const std::string prefix = std::string(key) + "=";
    if (field.rfind(prefix, 0) != 0 || field.size() == prefix.size()) return false;
    out = field.substr(prefix.size());
    return true;
  };
  std::string pid_text;
  if (!value(route, "route", e.route) || !value(pid, "pid", pid_text) || !value(comm, "comm", e.comm)) return false;
  if (pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9) return false;
  e.pid = std::stol(pid_text);
  e.line = line;
  return true;
}

}  // namespace

std::vector<guard_event> guard_log::refusals() const {
  std::vector<guard_event> out;
  for (const auto& e : events) {
    if (e.event == "refused") out.push_back(e);
  }
  return out;
}

guard_log read_guard_log(const fs::path& file, std::size_t max_bytes) {
  guard_log log;
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    log.problem = fmt::format("cannot open {}: {}", file.string(), std::strerror(errno));
    return log;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    log.problem = fmt::format("{} is not a regular file", file.string());
    return log;
  }
  std::string data(max_bytes + 1, '\0');
  std::size_t size = 0;
  while (size < data.size()) {
    const ssize_t n = ::read(fd, data.data() + size, data.size() - size);
    if (n <= 0) break;
    size += static_cast<std::size_t>(n);
  }
  ::close(fd);
  log.truncated = size > max_bytes;
  data.resize(std::min(size, max_bytes));
  std::istringstream lines(data);
  for (std::string line; std::getline(lines, line);) {
    guard_event e;
    if (parse_line(line, e)) {
      log.events.push_back(std::move(e));
    } else if (!line.empty()) {
      ++log.ignored_lines;
    }
  }
  return log;
}

std::string describe_refusals(const std::vector<guard_event>& refusals) {
  std::string out;
  for (const auto& e : refusals) out += fmt::format("{} refused in pid {} ({})\n", e.entry, e.pid, e.comm);
  return out;
}

}  // namespace pk::sandbox
