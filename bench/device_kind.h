// Where the judge runs a problem's ranks: on GPUs (one per rank, NCCL) or on the CPU (gloo). The
// enum is what every struct holds; its names "cuda" and "cpu" are the one spelling of command
// lines, config files and JSON (results, run plans, ledgers, transcripts, launch specs).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace pk::bench {

enum class device_kind { cuda, cpu };

/// Every device, in the order help texts and errors name them.
inline constexpr std::array all_devices = {device_kind::cuda, device_kind::cpu};

/// Where an evaluation runs when nothing says otherwise: the GPUs the benchmark is made for.
inline constexpr device_kind default_device = device_kind::cuda;

/// "cuda" or "cpu". (A std::string: CLI11 finds it by argument-dependent lookup and needs one.)
std::string to_string(device_kind d);

/// What parse_device read: a device, or why the text names none.
struct device_parse {
  std::optional<device_kind> device;
  std::string error;  ///< when `device` is unset: the text and the accepted names, e.g. "\"gpu\" is not cuda or cpu"
};

/// The device `text` names (exactly "cuda" or "cpu").
device_parse parse_device(std::string_view text);

/// JSON holds a device as its name. from_json throws nlohmann::json::type_error (carrying
/// parse_device's error) for anything else, so that readers of JSON files name it as they name
/// any other malformed value.
void to_json(nlohmann::json& j, device_kind d);
void from_json(const nlohmann::json& j, device_kind& d);

}  // namespace pk::bench
