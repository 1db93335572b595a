#include "bench/device_kind.h"

#include <array>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "config/enum_names.h"

namespace pk::bench {

namespace {

constexpr std::array<config::enum_name<device_kind>, 2> device_names = {{
    {device_kind::cuda, "cuda"},
    {device_kind::cpu, "cpu"},
}};

}  // namespace

std::string to_string(device_kind d) { return std::string(config::enum_to_string(device_names, d)); }

device_parse parse_device(std::string_view text) {
  if (const auto d = config::enum_from_string(device_names, text)) return {*d, {}};
  std::vector<std::string> names;
  for (device_kind d : all_devices) names.push_back(to_string(d));
  return {std::nullopt, fmt::format("\"{}\" is not {}", text, fmt::join(names, " or "))};
}

void to_json(nlohmann::json& j, device_kind d) { j = to_string(d); }

void from_json(const nlohmann::json& j, device_kind& d) {
  const device_parse p = parse_device(j.get<std::string>());
  if (!p.device) throw nlohmann::json::type_error::create(302, "device: " + p.error, &j);
  d = *p.device;
}

}  // namespace pk::bench
