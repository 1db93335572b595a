#include "config/paths.h"

#include <cstdlib>

#include "pkagent/build_info.h"

namespace pk::config {

std::filesystem::path home() {
  if (const char* env = std::getenv("PKAGENT_HOME"); env && *env) return env;
  return build_info::source_dir;
}

std::filesystem::path data_path(const std::string& relative) { return home() / relative; }

std::string python() {
  if (const char* env = std::getenv("PKAGENT_PYTHON"); env && *env) return env;
  if (*build_info::python) return build_info::python;
  return "python3";
}

}  // namespace pk::config
