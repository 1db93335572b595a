// Reading what untrusted code may have written. A candidate's process can replace any file of its
// workspace with a symbolic link (to the judge's cached reference outputs, say), a hard link, a
// FIFO that would block the reader, a device, or a file too large to hold; the judge runs outside
// every sandbox, with more rights than the candidate, so it must never follow or wait on any of
// these. Files are read only after the candidate's whole process set has ended.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace pk::bench {

/// The file is missing, is not a plain regular file, or is larger than allowed; the message
/// names the path and which.
class untrusted_file_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Reads `relative` under the trusted directory `root`, resolving it one component at a time
/// without following any symbolic link, and only when it ends in a regular file with a single
/// link of at most `max_bytes`.
std::string read_untrusted(const std::filesystem::path& root, const std::filesystem::path& relative,
                           std::uint64_t max_bytes);

/// Whether `relative` under `root` exists as a regular file by the same rules (no link followed).
bool untrusted_file_exists(const std::filesystem::path& root, const std::filesystem::path& relative);

}  // namespace pk::bench
