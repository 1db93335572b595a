// The --device option of every command that picks where evaluations run: the names "cuda" and
// "cpu" on the command line, a bench::device_kind (or an optional one, where unset has a meaning
// of its own) in the command's options.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/device_kind.h"

namespace pk::bench {

/// Adds --device to `c`, bound to `device`: a device_kind (its value stands as the default) or a
/// std::optional<device_kind> (unset unless given).
template <typename T>
CLI::Option* add_device_option(CLI::App& c, T& device, const std::string& help) {
  std::map<std::string, device_kind> by_name;
  std::vector<std::string> names;
  for (device_kind d : all_devices) {
    by_name.emplace(to_string(d), d);
    names.push_back(to_string(d));
  }
  // CheckedTransformer maps a name to the enum. On its own it would also take the enum's numbers
  // (0, 1) and show them in help and errors, so the names are checked before it: transform() puts
  // each validator ahead of those added before.
  CLI::Option* o = c.add_option("--device", device, help)
                       ->transform(CLI::CheckedTransformer(by_name).description(""))
                       ->transform(CLI::IsMember(names))
                       ->type_name("TEXT");
  if constexpr (std::is_same_v<T, device_kind>) o->capture_default_str();
  return o;
}

}  // namespace pk::bench
