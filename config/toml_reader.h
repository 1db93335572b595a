// Strict reading of TOML config files: every key must be known, of the right type and in range.
// A config_error names the file, the dotted key and the fix; loaders call finish() so that an
// unknown key (usually a typo) is refused instead of silently ignored, with the nearest key the
// loader asked for as the suggestion.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

namespace pk::config {

/// Thrown for any bad config: the message reads "FILE: KEY: reason".
class config_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses a TOML file; syntax errors become config_error with line and column.
toml::table parse_file(const std::filesystem::path& file);
/// Parses TOML text; `origin` names it in error messages.
toml::table parse_text(std::string_view text, const std::string& origin);

/// Reads one table, remembering which keys were consumed.
class table_reader {
 public:
  table_reader(const toml::table& table, std::string origin, std::string prefix = "");

  std::optional<std::string> string(std::string_view key);
  std::optional<bool> boolean(std::string_view key);
  std::optional<std::int64_t> integer(std::string_view key);
  /// An integer >= 0 (limits, sizes, counts).
  std::optional<std::int64_t> non_negative(std::string_view key);
  /// A float or integer; TOML has no unsigned types, so ranges are checked by the caller.
  std::optional<double> number(std::string_view key);
  std::optional<double> non_negative_number(std::string_view key);
  std::optional<std::vector<std::string>> strings(std::string_view key);
  std::optional<std::vector<std::int64_t>> integers(std::string_view key);

  /// A sub-table; nullopt when absent. Its keys are checked by its own finish().
  std::optional<table_reader> table(std::string_view key);
  /// An array of tables (`[[key]]`), one reader each (prefix "key[i]"); nullopt when absent.
  std::optional<std::vector<table_reader>> tables(std::string_view key);
  /// The keys of this table not yet consumed, in file order (for tables of named entries).
  std::vector<std::string> remaining_keys() const;

  /// Throws config_error naming the first key that was never consumed, and the known key
  /// (one this reader was asked for) nearest to it.
  void finish() const;

  /// Builds the error for `key` (prefixed with file and table path) for callers' own checks.
  config_error error(std::string_view key, std::string_view reason) const;

  const std::string& origin() const { return origin_; }

 private:
  const toml::node* take(std::string_view key);
  std::string dotted(std::string_view key) const;

  const toml::table* table_;
  std::string origin_;
  std::string prefix_;
  std::set<std::string, std::less<>> consumed_;
  std::vector<std::string> asked_;  ///< every key looked up, present or not: the known keys
};

/// `value` as a TOML string literal (quoted and escaped), e.g. for text given on a command line.
std::string toml_string(std::string_view value);

/// Parses a size such as "512M", "4G", "1024" (bytes) or "64K"; throws std::invalid_argument.
std::uint64_t parse_size(std::string_view text);

}  // namespace pk::config
