// Files that several hosts read and write on a shared filesystem (NFS, Lustre ...) while a run is
// sharded over them: written whole under a name unique to this host and process, then renamed,
// so a reader on any host sees the old content or the new, never a part.
#pragma once

#include <filesystem>
#include <string>

namespace pk::run {

/// This host's name (gethostname).
std::string host_name();

/// "<host>.<pid>.<n>": unique among the processes of every host sharing a directory.
std::string unique_suffix();

/// Replaces `file` with `text` atomically. Throws std::runtime_error naming the file on failure.
void write_file_atomically(const std::filesystem::path& file, const std::string& text);

/// Creates `file` holding `text` unless it exists (atomically: of several hosts racing, exactly one
/// creates it). Returns whether this call created it. Throws std::runtime_error on other failures.
bool create_file_exclusively(const std::filesystem::path& file, const std::string& text);

}  // namespace pk::run
