#include "config/toml_reader.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "config/nearest.h"

namespace pk::config {

namespace {

config_error parse_failure(const toml::parse_error& e, const std::string& origin) {
  const auto& where = e.source().begin;
  return config_error(fmt::format("{}:{}:{}: TOML syntax error: {}", origin, where.line,
                                  where.column, e.description()));
}

std::string_view type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    default: return "a date or time";
  }
}

}  // namespace

toml::table parse_file(const std::filesystem::path& file) {
  try {
    return toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    // toml++ reports a missing file as a parse error; say so plainly.
    if (!std::filesystem::exists(file))
      throw config_error(fmt::format("{}: no such config file", file.string()));
    throw parse_failure(e, file.string());
  }
}

toml::table parse_text(std::string_view text, const std::string& origin) {
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    throw parse_failure(e, origin);
  }
}

table_reader::table_reader(const toml::table& table, std::string origin, std::string prefix)
    : table_(&table), origin_(std::move(origin)), prefix_(std::move(prefix)) {}

std::string table_reader::dotted(std::string_view key) const {
  return prefix_.empty() ? std::string(key) : fmt::format("{}.{}", prefix_, key);
}

config_error table_reader::error(std::string_view key, std::string_view reason) const {
  return config_error(fmt::format("{}: {}: {}", origin_, dotted(key), reason));
}

const toml::node* table_reader::take(std::string_view key) {
  if (std::find(asked_.begin(), asked_.end(), key) == asked_.end()) asked_.emplace_back(key);
  const toml::node* n = table_->get(key);
  if (n) consumed_.emplace(key);
  return n;
}

std::optional<std::string> table_reader::string(std::string_view key) {
  const toml::node* n = take(key);
  if (!n) return std::nullopt;
  if (!n->is_string()) throw error(key, fmt::format("expected a string, found {}", type_name(*n)));
  return n->as_string()->get();
}

std::optional<bool> table_reader::boolean(std::string_view key) {
  const toml::node* n = take(key);
  if (!n) return std::nullopt;
  if (!n->is_boolean())
    throw error(key, fmt::format("expected true or false, found {}", type_name(*n)));
  return n->as_boolean()->get();
}

std::optional<std::int64_t> table_reader::integer(std::string_view key) {
  const toml::node* n = take(key);
  if (!n) return std::nullopt;
  if (!n->is_integer())
    throw error(key, fmt::format("expected an integer, found {}", type_name(*n)));
  return n->as_integer()->get();
}

std::optional<std::int64_t> table_reader::non_negative(std::string_view key) {
  auto v = integer(key);
  if (v && *v < 0) throw error(key, fmt::format("must be >= 0, found {}", *v));
  return v;
}

std::optional<double> table_reader::number(std::string_view key) {
  const toml::node* n = take(key);
  if (!n) return std::nullopt;
  if (n->is_integer()) return static_cast<double>(n->as_integer()->get());
  if (!n->is_floating_point())
    throw error(key, fmt::format("expected a number, found {}", type_name(*n)));
  return n->as_floating_point()->get();
}

std::optional<double> table_reader::non_negative_number(std::string_view key) {
  auto v = number(key);
  if (v && !(*v >= 0)) throw error(key, fmt::format("must be >= 0, found {}", *v));
  return v;
}

std::optional<std::vector<std::string>> table_reader::strings(std::string_view key) {
  const toml::node* n = take(key);
  if (!n) return std::nullopt;
  const toml::array* a = n->as_array();
  if (!a) throw error(key, fmt::format("expected an array of strings, found {}", type_name(*n)));
  std::vector<std::string> out;
  for (const auto& item : *a) {
    if (!item.is_string()) throw error(key, "every element must be a string");
    out.push_back(item.as_string()->get());
  }
  return out;
}

std::optional<std::vector<std::int64_t>> table_reader::integers(std::string_view key) {
  const toml::node* n = take(key);
  if (!n) return std::nullopt;
  const toml::array* a = n->as_array();
  if (!a) throw error(key, fmt::format("expected an array of integers, found {}", type_name(*n)));
  std::vector<std::int64_t> out;
  for (const auto& item : *a) {
    if (!item.is_integer()) throw error(key, "every element must be an integer");
    out.push_back(item.as_integer()->get());
  }
  return out;
}

std::optional<table_reader> table_reader::table(std::string_view key) {
  const toml::node* n = take(key);
  if (!n) return std::nullopt;
  if (!n->is_table()) throw error(key, fmt::format("expected a table, found {}", type_name(*n)));
  return table_reader(*n->as_table(), origin_, dotted(key));
}

std::optional<std::vector<table_reader>> table_reader::tables(std::string_view key) {
  const toml::node* n = take(key);
  if (!n) return std::nullopt;
  const toml::array* a = n->as_array();
  if (!a || (!a->empty() && !a->is_array_of_tables()))
    throw error(key, fmt::format("expected an array of tables ([[{}]] entries), found {}", key, type_name(*n)));
  std::vector<table_reader> out;
  for (std::size_t i = 0; i < a->size(); ++i)
    out.emplace_back(*a->get(i)->as_table(), origin_, fmt::format("{}[{}]", dotted(key), i));
  return out;
}

std::vector<std::string> table_reader::remaining_keys() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : *table_)
    if (!consumed_.count(k.str())) out.emplace_back(k.str());
  return out;
}

void table_reader::finish() const {
  for (const auto& [k, v] : *table_) {
    if (consumed_.count(k.str())) continue;
    if (auto near = nearest(k.str(), asked_)) throw error(k.str(), fmt::format("unknown key; did you mean {}?", dotted(*near)));
    throw error(k.str(), "unknown key (check its spelling against the documented keys)");
  }
}

std::string toml_string(std::string_view value) {
  std::ostringstream out;
  out << toml::value<std::string>(std::string(value));
  return out.str();
}

std::uint64_t parse_size(std::string_view text) {
  if (text.empty()) throw std::invalid_argument("empty size");
  std::size_t i = 0;
  std::uint64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    std::uint64_t digit = static_cast<std::uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
      throw std::invalid_argument(fmt::format("size '{}' is too large", text));
    value = value * 10 + digit;
    ++i;
  }
  if (i == 0) throw std::invalid_argument(fmt::format("size '{}' must start with a number", text));
  std::string_view unit = text.substr(i);
  std::uint64_t scale = 1;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "K" || unit == "KiB" || unit == "k") scale = 1ull << 10;
  else if (unit == "M" || unit == "MiB") scale = 1ull << 20;
  else if (unit == "G" || unit == "GiB") scale = 1ull << 30;
  else if (unit == "T" || unit == "TiB") scale = 1ull << 40;
  else
    throw std::invalid_argument(
        fmt::format("size '{}' has an unknown unit '{}' (use K, M, G or T)", text, unit));
  if (value > std::numeric_limits<std::uint64_t>::max() / scale)
    throw std::invalid_argument(fmt::format("size '{}' is too large", text));
  return value * scale;
}

}  // namespace pk::config
