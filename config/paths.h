// Where pkagent finds its data files (prompts/, config/, bench/problems/, bench/worker/ ...).
#pragma once

#include <filesystem>
#include <string>

namespace pk::config {

/// The project root: $PKAGENT_HOME when set, else the source tree the binary was built from.
std::filesystem::path home();
/// home() / relative, e.g. data_path("config/sandbox.toml").
std::filesystem::path data_path(const std::string& relative);
/// The Python interpreter for rank workers: $PKAGENT_PYTHON, the build's configured one, or python3.
std::string python();

}  // namespace pk::config
