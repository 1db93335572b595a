// Facts about the machine an episode ran on, for the transcript header.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace pk::agent {

/// {"hostname", "kernel", "cpus", "gpus": {"count", "models": [...]}} from /proc and uname;
/// GPUs are read from /proc/driver/nvidia (count 0 where there is no NVIDIA driver).
nlohmann::json host_facts();

/// The current time as ISO 8601 UTC ("2026-11-30T14:05:09Z").
std::string utc_now();

}  // namespace pk::agent
