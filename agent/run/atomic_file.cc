#include "agent/run/atomic_file.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

namespace pk::run {
namespace fs = std::filesystem;

namespace {

fs::path write_partial(const fs::path& file, const std::string& text) {
  const fs::path tmp = file.string() + "." + unique_suffix() + ".partial";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out || !out.write(text.data(), static_cast<std::streamsize>(text.size())) || !out.flush())
    throw std::runtime_error(fmt::format("{}: cannot write (is its directory there and writable?)", tmp.string()));
  return tmp;
}

}  // namespace

std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "host";
  return host;
}

std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  return fmt::format("{}.{}.{}", host_name(), ::getpid(), counter++);
}

void write_file_atomically(const fs::path& file, const std::string& text) {
  const fs::path tmp = write_partial(file, text);
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) {
    fs::remove(tmp);
    throw std::runtime_error(fmt::format("{}: cannot replace: {}", file.string(), ec.message()));
  }
}

bool create_file_exclusively(const fs::path& file, const std::string& text) {
  const fs::path tmp = write_partial(file, text);
  // link(2) fails with EEXIST when the name is taken, on NFS too, where O_EXCL was long unreliable.
  const int rc = ::link(tmp.c_str(), file.c_str());
  const int err = errno;
  fs::remove(tmp);
  if (rc == 0) return true;
  if (err == EEXIST) return false;
  throw std::runtime_error(fmt::format("{}: cannot create: {}", file.string(), std::strerror(err)));
}

}  // namespace pk::run
