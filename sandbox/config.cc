#include "sandbox/config.h"

#include <array>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "config/enum_names.h"
#include "config/paths.h"
#include "config/toml_reader.h"

namespace pk::sandbox {

namespace {

using pk::config::table_reader;

void read_size(table_reader& t, std::string_view key, std::uint64_t& into) {
  if (auto text = t.string(key)) {
    try {
      into = pk::config::parse_size(*text);
    } catch (const std::invalid_argument& e) {
      throw t.error(key, fmt::format("'{}' is not a size such as \"512M\", \"4G\" or \"0\" (none): {}", *text, e.what()));
    }
  }
}

void read_count(table_reader& t, std::string_view key, std::uint64_t& into) {
  if (auto v = t.non_negative(key)) into = static_cast<std::uint64_t>(*v);
}

sandbox_config read(const toml::table& root, const std::string& origin) {
  sandbox_config c;
  table_reader top(root, origin);
  if (auto t = top.table("limits")) {
    if (auto s = t->non_negative_number("timeout_seconds")) {
      c.limits.wall = std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(*s * 1000)));
    }
    read_count(*t, "cpu_seconds", c.limits.cpu_seconds);
    read_size(*t, "file_size", c.limits.file_size_bytes);
    read_count(*t, "open_files", c.limits.open_files);
    read_count(*t, "processes", c.limits.processes);
    read_size(*t, "memory", c.limits.memory_bytes);
    read_size(*t, "tmp_size", c.limits.tmp_bytes);
    read_size(*t, "output", c.limits.output_bytes);
    t->finish();
  }
  if (auto t = top.table("sandbox")) {
    if (auto name = t->string("isolation")) {
      try {
        c.isolation = parse_isolation(*name);
      } catch (const std::invalid_argument& e) {
        throw t->error("isolation", e.what());
      }
    }
    t->finish();
  }
  top.finish();
  return c;
}

}  // namespace

std::filesystem::path default_config_file() { return pk::config::data_path("config/sandbox.toml"); }

sandbox_config load_config(const std::filesystem::path& file) {
  return read(pk::config::parse_file(file), file.string());
}

sandbox_config parse_config(std::string_view text, const std::string& origin) {
  return read(pk::config::parse_text(text, origin), origin);
}

constexpr std::array<pk::config::enum_name<enum isolation>, 2> isolation_names = {{
    {isolation::bwrap, "bwrap"},
    {isolation::none, "none"},
}};

enum isolation parse_isolation(std::string_view name) {
  if (const auto i = pk::config::enum_from_string(isolation_names, name)) return *i;
  throw std::invalid_argument(fmt::format("'{}' is not an isolation; use \"bwrap\" or \"none\"", name));
}

std::string_view to_string(enum isolation i) { return pk::config::enum_to_string(isolation_names, i); }

}  // namespace pk::sandbox
