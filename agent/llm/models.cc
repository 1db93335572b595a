// config/models.toml -> model_config, and "openai-compatible:URL#MODEL" specs.
#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "agent/llm/llm.h"
#include "config/toml_reader.h"

namespace pk::llm {
namespace {

using pk::config::table_reader;

constexpr std::string_view compatible_prefix = "openai-compatible:";

protocol parse_protocol(table_reader& t) {
  const auto p = t.string("provider");
  if (!p) throw t.error("provider", "missing; one of openai-chat, openai-responses, anthropic");
  if (*p == "openai-chat") return protocol::openai_chat;
  if (*p == "openai-responses") return protocol::openai_responses;
  if (*p == "anthropic") return protocol::anthropic;
  throw t.error("provider", fmt::format("'{}' is not one of openai-chat, openai-responses, anthropic", *p));
}

millis seconds_key(table_reader& t, std::string_view key, millis fallback) {
  const auto v = t.non_negative_number(key);
  return v ? millis(static_cast<std::int64_t>(*v * 1000.0)) : fallback;
}

void read_retry(table_reader& t, retry_policy& r) {
  if (auto v = t.non_negative("max_retries")) r.max_retries = static_cast<int>(*v);
  r.initial_backoff = seconds_key(t, "initial_backoff_s", r.initial_backoff);
  r.max_backoff = seconds_key(t, "max_backoff_s", r.max_backoff);
  r.max_total_wait = seconds_key(t, "max_total_wait_s", r.max_total_wait);
  t.finish();
}

void read_timeouts(table_reader& t, timeouts& to) {
  to.connect = seconds_key(t, "connect_s", to.connect);
  to.request = seconds_key(t, "request_s", to.request);
  to.idle = seconds_key(t, "idle_s", to.idle);
  t.finish();
}

void read_sampling(table_reader& t, sampling& s) {
  if (auto v = t.number("temperature")) s.temperature = *v;
  if (auto v = t.number("top_p")) s.top_p = *v;
  if (auto v = t.non_negative("max_output_tokens")) s.max_output_tokens = *v;
  if (auto v = t.string("reasoning_effort")) {
    if (*v != "minimal" && *v != "low" && *v != "medium" && *v != "high")
      throw t.error("reasoning_effort", "expected minimal, low, medium or high");
    s.reasoning_effort = *v;
  }
  if (auto v = t.integer("seed")) s.seed = *v;
  if (auto v = t.strings("stop")) s.stop = *v;
  t.finish();
}

void read_prices(table_reader& t, prices& p) {
  const auto in = t.non_negative_number("input");
  const auto out = t.non_negative_number("output");
  if (!in || !out) throw t.error(!in ? "input" : "output", "missing (USD per million tokens)");
  p.input = *in;
  p.output = *out;
  p.cached_input = t.non_negative_number("cached_input").value_or(p.input);
  p.cache_write = t.non_negative_number("cache_write").value_or(p.input);
  p.known = true;
  t.finish();
}

// Settings shared by every model: the file's top-level [retry] and [timeouts].
struct file_defaults {
  retry_policy retry;
  timeouts timeout;
};

model_config read_model(table_reader& t, const std::string& name, const file_defaults& d) {
  model_config m;
  m.name = name;
  m.retry = d.retry;
  m.timeout = d.timeout;
  m.provider = parse_protocol(t);
  m.base_url = t.string("base_url").value_or("");
  if (m.base_url.empty()) throw t.error("base_url", "missing (e.g. https://api.openai.com/v1)");
  while (!m.base_url.empty() && m.base_url.back() == '/') m.base_url.pop_back();
  m.model = t.string("model").value_or("");
  if (m.model.empty()) throw t.error("model", "missing (the provider's model id)");
  m.api_key_env = t.string("api_key_env").value_or("");
  m.key_optional = t.boolean("key_optional").value_or(m.api_key_env.empty());
  m.context_window = t.non_negative("context_window").value_or(0);
  m.stream = t.boolean("stream").value_or(true);
  m.prompt_cache = t.boolean("prompt_cache").value_or(true);
  if (auto eb = t.string("extra_body")) {
    try {
      m.extra_body = json::parse(*eb);
    } catch (const json::exception& e) {
      throw t.error("extra_body", fmt::format("not valid JSON: {}", e.what()));
    }
    if (!m.extra_body.is_object()) throw t.error("extra_body", "must be a JSON object");
  }
  if (auto p = t.table("price")) read_prices(*p, m.price);
  if (auto s = t.table("defaults")) read_sampling(*s, m.defaults);
  if (auto r = t.table("retry")) read_retry(*r, m.retry);
  if (auto to = t.table("timeouts")) read_timeouts(*to, m.timeout);
  t.finish();
  return m;
}

std::vector<model_config> read_file(const std::filesystem::path& file) {
  const toml::table root = pk::config::parse_file(file);
  table_reader top(root, file.string());
  file_defaults d;
  if (auto r = top.table("retry")) read_retry(*r, d.retry);
  if (auto to = top.table("timeouts")) read_timeouts(*to, d.timeout);
  std::vector<model_config> out;
  if (auto models = top.table("models")) {
    for (const auto& name : models->remaining_keys()) {
      auto t = models->table(name);
      out.push_back(read_model(*t, name, d));
    }
    models->finish();
  }
  top.finish();
  return out;
}

void require_key(const model_config& m) {
  if (m.api_key_env.empty() || m.key_optional) return;
  const char* v = std::getenv(m.api_key_env.c_str());
  if (v == nullptr || *v == '\0')
    throw llm_error(llm_error::kind::config,
                    fmt::format("model '{}' needs an API key: set the environment variable {} "
                                "(export {}=...)",
                                m.name, m.api_key_env, m.api_key_env));
}

}  // namespace

std::string model_identity(const std::string& name_or_spec) {
  if (!name_or_spec.starts_with(compatible_prefix)) return name_or_spec;
  std::string rest = name_or_spec.substr(compatible_prefix.size());
  const auto scheme = rest.find("://");
  const auto hash = rest.rfind('#');
  if (scheme == std::string::npos || hash == std::string::npos || hash < scheme) return name_or_spec;
  rest.erase(0, scheme + 3);
  const std::size_t host_end = std::min(rest.find('/'), rest.rfind('#'));
  const auto colon = rest.rfind(':', host_end);
  // "[::1]:8080": the port's colon comes after the closing bracket.
  const auto bracket = rest.find(']');
  if (colon != std::string::npos && colon < host_end && (bracket == std::string::npos || colon > bracket))
    rest.erase(colon, host_end - colon);
  while (true) {  // "HOST/v1/#m" and "HOST/v1#m" are the same server
    const auto h = rest.rfind('#');
    if (h == 0 || rest[h - 1] != '/') break;
    rest.erase(h - 1, 1);
  }
  return std::string(compatible_prefix) + rest;
}

std::vector<model_config> load_models(const std::filesystem::path& models_toml) {
  return read_file(models_toml);
}

model_config resolve_model(const std::string& name_or_spec, const std::filesystem::path& models_toml) {
  if (name_or_spec.starts_with(compatible_prefix)) {
    const std::string rest = name_or_spec.substr(compatible_prefix.size());
    const auto hash = rest.rfind('#');
    if (hash == std::string::npos || hash == 0 || hash + 1 == rest.size())
      throw llm_error(llm_error::kind::config,
                      fmt::format("bad model spec '{}': expected openai-compatible:URL#MODEL, e.g. "
                                  "openai-compatible:http://127.0.0.1:8080/v1#qwen2.5-coder",
                                  name_or_spec));
    model_config m;
    m.name = model_identity(name_or_spec);
    m.provider = protocol::openai_chat;
    m.defaults.max_output_tokens = compatible_max_output_tokens;
    m.base_url = rest.substr(0, hash);
    while (!m.base_url.empty() && m.base_url.back() == '/') m.base_url.pop_back();
    if (!m.base_url.starts_with("http://") && !m.base_url.starts_with("https://"))
      throw llm_error(llm_error::kind::config,
                      fmt::format("bad model spec '{}': the URL must start with http:// or https://",
                                  name_or_spec));
    m.model = rest.substr(hash + 1);
    m.api_key_env = "OPENAI_API_KEY";
    m.key_optional = true;
    // Settings shared by all models still apply.
    if (std::filesystem::exists(models_toml)) {
      const toml::table root = pk::config::parse_file(models_toml);
      table_reader top(root, models_toml.string());
      if (auto r = top.table("retry")) read_retry(*r, m.retry);
      if (auto to = top.table("timeouts")) read_timeouts(*to, m.timeout);
    }
    return m;
  }
  if (!std::filesystem::exists(models_toml))
    throw llm_error(llm_error::kind::config,
                    fmt::format("unknown model '{}': the model table {} does not exist (or use "
                                "--model openai-compatible:URL#MODEL)",
                                name_or_spec, models_toml.string()));
  const auto models = read_file(models_toml);
  for (const auto& m : models) {
    if (m.name != name_or_spec) continue;
    require_key(m);
    return m;
  }
  std::string names;
  for (const auto& m : models) names += (names.empty() ? "" : ", ") + m.name;
  throw llm_error(llm_error::kind::config,
                  fmt::format("unknown model '{}': {} defines {}; add it there or use "
                              "--model openai-compatible:URL#MODEL",
                              name_or_spec, models_toml.string(), names.empty() ? "no models" : names));
}

}  // namespace pk::llm
