#include "agent/run/pkb_tool/python_env.h"

#include <algorithm>
#include <cstdlib>

#include "config/paths.h"

namespace pk::pkb {
namespace fs = std::filesystem;

void add_python(sandbox::spec& s) {
  std::error_code ec;
  const fs::path python = config::python();
  if (!python.is_absolute()) return;
  for (const fs::path& py : {python, fs::canonical(python, ec)}) {
    if (py.empty() || py.parent_path().filename() != "bin") continue;
    const fs::path prefix = py.parent_path().parent_path();
    if (prefix == "/usr" || prefix == "/usr/local" || prefix == "/") continue;
    const bool listed = std::any_of(s.binds.begin(), s.binds.end(), [&](const auto& b) { return b.host == prefix; });
    if (!listed) s.binds.push_back({prefix, prefix, false});
  }
  auto& path = s.env["PATH"];
  if (path.empty()) {
    const char* host = std::getenv("PATH");
    path = host && *host ? host : "/usr/local/bin:/usr/bin:/bin";
  }
  path = python.parent_path().string() + ":" + path;
}

}  // namespace pk::pkb
