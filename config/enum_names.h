// How an enum is spelt as text and read back: one constexpr table of {value, name} pairs per enum,
// looked up in both directions, so the name written and the name read can never drift apart.
//
//   constexpr std::array<config::enum_name<colour>, 2> colour_names = {{{colour::red, "red"},
//                                                                        {colour::blue, "blue"}}};
//   std::string_view to_string(colour c) { return config::enum_to_string(colour_names, c); }
//   std::optional<colour> parse_colour(std::string_view s) { return config::enum_from_string(colour_names, s); }
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace pk::config {

template <class E>
struct enum_name {
  E value;
  std::string_view name;
};

/// The name of `value` in `table`; `missing` when the table lacks it.
template <class E, std::size_t N>
constexpr std::string_view enum_to_string(const std::array<enum_name<E>, N>& table, E value,
                                          std::string_view missing = "?") {
  for (const enum_name<E>& e : table)
    if (e.value == value) return e.name;
  return missing;
}

/// The value named `name` in `table`; nullopt for a name it does not hold.
template <class E, std::size_t N>
constexpr std::optional<E> enum_from_string(const std::array<enum_name<E>, N>& table, std::string_view name) {
  for (const enum_name<E>& e : table)
    if (e.name == name) return e.value;
  return std::nullopt;
}

}  // namespace pk::config
