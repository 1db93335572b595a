#include "sandbox/rlimits.h"

#include <sys/resource.h>

namespace pk::sandbox {

std::vector<rlimit_setting> rlimits_for(const limits& l, bool nproc_fallback) {
  std::vector<rlimit_setting> out;
  if (l.cpu_seconds > 0) out.push_back({RLIMIT_CPU, l.cpu_seconds});
  if (l.file_size_bytes > 0) out.push_back({RLIMIT_FSIZE, l.file_size_bytes});
  if (l.open_files > 0) out.push_back({RLIMIT_NOFILE, l.open_files});
  if (nproc_fallback && l.processes > 0) out.push_back({RLIMIT_NPROC, l.processes});
  return out;
}

}  // namespace pk::sandbox
