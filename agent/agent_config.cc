#include "agent/agent_config.h"

#include <array>

#include <fmt/format.h>

#include "config/enum_names.h"
#include "config/toml_reader.h"

namespace pk::agent {
namespace {

using pk::config::table_reader;

std::uint64_t read_size(table_reader& t, std::string_view key, std::uint64_t current) {
  // A size is "10K"-style text or a plain byte count.
  try {
    if (auto s = t.string(key)) return pk::config::parse_size(*s);
  } catch (const std::invalid_argument& e) {
    throw t.error(key, fmt::format("{} (write e.g. \"10K\" or 10240)", e.what()));
  } catch (const pk::config::config_error&) {
    if (auto n = t.non_negative(key)) return static_cast<std::uint64_t>(*n);
  }
  return current;
}

// Reads the keys present in `root` into `cfg`, leaving absent ones as they are, so the same
// function loads the file and applies overrides.
void read_into(agent_config& cfg, table_reader root) {
  if (auto a = root.table("action")) {
    if (auto f = a->string("format")) {
      if (*f == "tools") cfg.action_format = action_format::tools;
      else if (*f == "text") cfg.action_format = action_format::text;
      else throw a->error("format", fmt::format("\"{}\" is not a format; use \"tools\" or \"text\"", *f));
    }
    a->finish();
  }
  if (auto l = root.table("limits")) {
    episode_limits& x = cfg.limits;
    if (auto v = l->non_negative("steps")) x.steps = *v;
    if (auto v = l->non_negative("format_errors")) x.format_errors = *v;
    if (auto v = l->non_negative("input_tokens")) x.input_tokens = *v;
    if (auto v = l->non_negative("output_tokens")) x.output_tokens = *v;
    if (auto v = l->non_negative_number("dollars")) x.dollars = *v;
    if (auto v = l->non_negative_number("wall_seconds")) x.wall_seconds = *v;
    if (auto v = l->non_negative_number("command_timeout_seconds")) x.command_timeout_seconds = *v;
    if (auto v = l->non_negative_number("gpu_seconds")) x.gpu_seconds = *v;
    if (auto v = l->non_negative_number("warn_fraction")) {
      if (*v > 1) throw l->error("warn_fraction", "must be between 0 and 1");
      x.warn_fraction = *v;
    }
    l->finish();
  }
  if (auto o = root.table("observation")) {
    cfg.stdout_bytes = read_size(*o, "stdout_bytes", cfg.stdout_bytes);
    cfg.stderr_bytes = read_size(*o, "stderr_bytes", cfg.stderr_bytes);
    if (cfg.stdout_bytes < 64 || cfg.stderr_bytes < 64)
      throw o->error("stdout_bytes", "must be at least 64 bytes, or the model sees only the marker");
    o->finish();
  }
  root.finish();
}

}  // namespace

constexpr std::array<pk::config::enum_name<action_format>, 2> action_format_names = {{
    {action_format::tools, "tools"},
    {action_format::text, "text"},
}};

std::string_view to_string(action_format f) { return pk::config::enum_to_string(action_format_names, f); }

agent_config load_agent_config(const std::filesystem::path& file) {
  agent_config cfg;
  toml::table t = pk::config::parse_file(file);
  read_into(cfg, table_reader(t, file.string()));
  return cfg;
}

void apply_overrides(agent_config& cfg, const std::vector<std::string>& overrides) {
  for (const std::string& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos)
      throw pk::config::config_error(
          fmt::format("--set {}: expected TABLE.KEY=VALUE, e.g. limits.steps=20", o));
    const std::string origin = fmt::format("--set {}", o);
    toml::table t;
    try {
      t = pk::config::parse_text(o, origin);
    } catch (const pk::config::config_error& as_toml) {
      // Not a TOML value (action.format=text): the text is the string meant, so that no shell
      // quoting is needed. A key that is not TOML either is reported as first found.
      try {
        t = pk::config::parse_text(o.substr(0, eq) + "=" + pk::config::toml_string(o.substr(eq + 1)), origin);
      } catch (const pk::config::config_error&) {
        throw as_toml;
      }
    }
    read_into(cfg, table_reader(t, origin));
  }
}

nlohmann::json to_json(const agent_config& cfg) {
  const episode_limits& l = cfg.limits;
  return {{"action_format", to_string(cfg.action_format)},
          {"limits",
           {{"steps", l.steps},
            {"format_errors", l.format_errors},
            {"input_tokens", l.input_tokens},
            {"output_tokens", l.output_tokens},
            {"dollars", l.dollars},
            {"wall_seconds", l.wall_seconds},
            {"command_timeout_seconds", l.command_timeout_seconds},
            {"gpu_seconds", l.gpu_seconds},
            {"warn_fraction", l.warn_fraction}}},
          {"observation", {{"stdout_bytes", cfg.stdout_bytes}, {"stderr_bytes", cfg.stderr_bytes}}}};
}

agent_config agent_config_from_json(const nlohmann::json& j) {
  agent_config cfg;
  cfg.action_format = j.at("action_format") == "text" ? action_format::text : action_format::tools;
  const auto& l = j.at("limits");
  cfg.limits = {l.at("steps"), l.at("format_errors"), l.at("input_tokens"), l.at("output_tokens"),
                l.at("dollars"), l.at("wall_seconds"), l.at("command_timeout_seconds"),
                l.at("gpu_seconds"), l.at("warn_fraction")};
  cfg.stdout_bytes = j.at("observation").at("stdout_bytes");
  cfg.stderr_bytes = j.at("observation").at("stderr_bytes");
  return cfg;
}

}  // namespace pk::agent
