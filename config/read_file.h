// Reading a whole file. Lives in pk_config, the one library every component links, so that each
// component reads files the same way and says the same thing when it cannot.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace pk {

/// The bytes of `file`. Throws std::system_error (errno as its code) whose message reads
/// "FILE: cannot read WHAT: REASON", e.g. "task/check.sh: cannot read the check script: No such
/// file or directory"; without `what`, "FILE: cannot read: REASON". A directory is an error
/// ("Is a directory"), not an empty file.
std::string read_file(const std::filesystem::path& file, std::string_view what = {});

/// The bytes of `file`, or nullopt where it cannot be read: for files whose absence is an
/// answer (driver and kernel files under /proc and /sys, a process that has just exited).
std::optional<std::string> try_read_file(const std::filesystem::path& file);

}  // namespace pk
