#include "bench/eval/untrusted_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include <fmt/format.h>

namespace pk::bench {

namespace fs = std::filesystem;

namespace {

class fd_guard {
 public:
  explicit fd_guard(int fd) : fd_(fd) {}
  ~fd_guard() {
    if (fd_ >= 0) ::close(fd_);
  }
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Opens the final component of `relative` under `root` (O_NOFOLLOW at every step, O_NONBLOCK so
// that a FIFO cannot block); nullopt with `why` when a step fails.
std::optional<int> open_beneath(const fs::path& root, const fs::path& relative, std::string& why) {
  int dir = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) {
    why = fmt::format("cannot open {}: {}", root.string(), std::strerror(errno));
    return std::nullopt;
  }
  std::vector<std::string> parts;
  for (const auto& part : relative.lexically_normal()) {
    const std::string s = part.string();
    if (s.empty() || s == ".") continue;
    if (s == ".." || part.is_absolute() || s == "/") {
      ::close(dir);
      why = "the path leaves its directory";
      return std::nullopt;
    }
    parts.push_back(s);
  }
  if (parts.empty()) {
    ::close(dir);
    why = "no file named";
    return std::nullopt;
  }
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const int next = ::openat(dir, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int err = errno;
    ::close(dir);
    if (next < 0) {
      why = err == ELOOP || err == ENOTDIR ? fmt::format("{} is not a plain directory", parts[i])
                                            : fmt::format("{}: {}", parts[i], std::strerror(err));
      return std::nullopt;
    }
    dir = next;
  }
  const int fd = ::openat(dir, parts.back().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  const int err = errno;
  ::close(dir);
  if (fd < 0) {
    why = err == ELOOP ? "it is a symbolic link" : std::strerror(err);
    return std::nullopt;
  }
  return fd;
}

std::string describe(const struct stat& st) {
  if (S_ISFIFO(st.st_mode)) return "it is a FIFO";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "it is a device";
  if (S_ISSOCK(st.st_mode)) return "it is a socket";
  if (S_ISDIR(st.st_mode)) return "it is a directory";
  return "it is not a regular file";
}

}  // namespace

std::string read_untrusted(const fs::path& root, const fs::path& relative, std::uint64_t max_bytes) {
  const std::string name = (root / relative).string();
  std::string why;
  const auto fd = open_beneath(root, relative, why);
  if (!fd) throw untrusted_file_error(fmt::format("{}: cannot be read: {}", name, why));
  const fd_guard guard(*fd);
  struct stat st {};
  if (::fstat(*fd, &st) != 0)
    throw untrusted_file_error(fmt::format("{}: cannot be read: {}", name, std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) throw untrusted_file_error(fmt::format("{}: refused: {}", name, describe(st)));
  if (st.st_nlink != 1)
    throw untrusted_file_error(fmt::format("{}: refused: it has {} hard links (a link to another file?)", name,
                                           st.st_nlink));
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    throw untrusted_file_error(fmt::format("{}: refused: {} bytes, more than the {} allowed", name, st.st_size,
                                           max_bytes));
  // Blocking reads from here on: a regular file never blocks, and its size can only have grown
  // through a writer that no longer exists.
  ::fcntl(*fd, F_SETFL, 0);
  std::string data;
  data.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  while (got < data.size()) {
    const ssize_t n = ::read(*fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw untrusted_file_error(fmt::format("{}: read failed: {}", name, std::strerror(errno)));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  data.resize(got);
  return data;
}

bool untrusted_file_exists(const fs::path& root, const fs::path& relative) {
  std::string why;
  const auto fd = open_beneath(root, relative, why);
  if (!fd) return false;
  const fd_guard guard(*fd);
  struct stat st {};
  return ::fstat(*fd, &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace pk::bench
