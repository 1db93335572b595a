#include "agent/run/scheduler/allocated_gpus.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace pk::scheduler {
namespace {

std::vector<int> parse_indices(const std::string& name, const std::string& value, const std::vector<int>& host) {
  std::set<int> out;
  std::string_view rest = value;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view part = rest.substr(0, comma);
    int v = -1;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || end != part.data() + part.size() || v < 0)
      throw std::invalid_argument(fmt::format(
          "{}={}: '{}' is not a GPU index; pkagent needs a comma-separated list of indices (not UUIDs or MIG "
          "names): set it to e.g. 0,1 or unset it",
          name, value, part));
    if (std::find(host.begin(), host.end(), v) == host.end())
      throw std::invalid_argument(fmt::format("{}={} names GPU {}, but this host has GPUs [{}]", name, value, v,
                                              fmt::join(host, ",")));
    out.insert(v);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return {out.begin(), out.end()};
}

}  // namespace

std::optional<std::string> process_env(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v ? std::optional<std::string>(v) : std::nullopt;
}

gpu_allocation allocated_gpus(const std::vector<int>& host, const env_lookup& env) {
  std::vector<std::string> names;
  if (env("SLURM_JOB_ID")) names = {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS"};
  names.push_back("CUDA_VISIBLE_DEVICES");
  for (const auto& name : names)
    if (auto value = env(name)) return {parse_indices(name, *value, host), name};
  return {host, "host"};
}

}  // namespace pk::scheduler
