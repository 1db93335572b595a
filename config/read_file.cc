#include "config/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include <fmt/format.h>

namespace pk {

namespace {

// POSIX calls rather than std::ifstream: a stream keeps no errno for the message, and it reads a
// directory as an empty file.
int read_all(const std::filesystem::path& file, std::string& out) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) out.reserve(static_cast<std::size_t>(st.st_size));
  int error = 0;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      error = errno;
      break;
    }
  }
  ::close(fd);
  return error;
}

}  // namespace

std::string read_file(const std::filesystem::path& file, std::string_view what) {
  std::string bytes;
  if (const int error = read_all(file, bytes); error != 0) {
    throw std::system_error(error, std::generic_category(),
                            fmt::format("{}: cannot read{}{}", file.string(), what.empty() ? "" : " ", what));
  }
  return bytes;
}

std::optional<std::string> try_read_file(const std::filesystem::path& file) {
  std::string bytes;
  if (read_all(file, bytes) != 0) return std::nullopt;
  return bytes;
}

}  // namespace pk
