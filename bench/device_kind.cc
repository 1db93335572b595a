#include "bench/device_kind.h"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace pk::bench {

std::string to_string(device_kind d) {
  switch (d) {
    case device_kind::cuda: return "cuda";
    case device_kind::cpu: return "cpu";
  }
  return "?";
}

device_parse parse_device(std::string_view text) {
  for (device_kind d : all_devices)
    if (to_string(d) == text) return {d, {}};
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
