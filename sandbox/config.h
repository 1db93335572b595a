// Defaults for sandboxed commands, read from config/sandbox.toml (or a file given with
// --config). Strict: an unknown key, a wrong type or a negative limit is refused with the file,
// the key and the reason (pk::config::config_error).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "sandbox/spec.h"

namespace pk::sandbox {

struct sandbox_config {
  struct limits limits;
  enum isolation isolation = isolation::bwrap;
};

/// config/sandbox.toml under pkagent's data home.
std::filesystem::path default_config_file();

sandbox_config load_config(const std::filesystem::path& file);
/// The same from TOML text; `origin` names it in errors.
sandbox_config parse_config(std::string_view text, const std::string& origin);

/// "bwrap" or "none"; anything else is std::invalid_argument.
enum isolation parse_isolation(std::string_view name);
/// The name parse_isolation reads: "bwrap" or "none".
std::string_view to_string(enum isolation i);

}  // namespace pk::sandbox
