// The machine an episode ran on, summarised for the transcript header (its `host`), and the time.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace pk::agent {

/// {"hostname", "kernel", "cpus", "gpus": {"count", "models": [...]}} from uname and
/// sandbox::list_host_gpus (count 0 where there is no NVIDIA driver; a model is listed where the
/// driver names it).
nlohmann::json host_summary();

/// The current time as ISO 8601 UTC ("2026-11-30T14:05:09Z").
std::string utc_now();

}  // namespace pk::agent
