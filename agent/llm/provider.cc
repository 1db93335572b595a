#include "agent/llm/provider.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace pk::llm::detail {

std::string provider::error_message(const json& reply) const {
  if (!reply.is_object()) return {};
  const auto e = reply.find("error");
  if (e == reply.end()) return {};
  if (e->is_string()) return e->get<std::string>();
  if (e->is_object()) {
    const auto m = e->find("message");
    if (m != e->end() && m->is_string()) return m->get<std::string>();
  }
  return e->dump();
}

bool says_context_overflow(std::string_view error_body) {
  static constexpr std::string_view phrases[] = {
      "context_length_exceeded",         "exceed_context_size_error", "exceeds the available context size",
      "maximum context length",          "prompt is too long",        "exceeds the context window",
      "exceeds the maximum number of tokens", "input is too long for the model",
  };
  std::string lower(error_body);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return std::any_of(std::begin(phrases), std::end(phrases),
                     [&](std::string_view p) { return lower.find(p) != std::string::npos; });
}

tool_call make_tool_call(std::string id, std::string name, std::string arguments_text) {
  tool_call c;
  c.id = std::move(id);
  c.name = std::move(name);
  c.arguments_text = std::move(arguments_text);
  if (c.arguments_text.empty()) {
    c.arguments = json::object();  // a call without arguments
    c.arguments_text = "{}";
    return c;
  }
  try {
    c.arguments = json::parse(c.arguments_text);
    if (!c.arguments.is_object()) {
      c.arguments_error = fmt::format("tool arguments must be a JSON object, got {}", c.arguments.type_name());
      c.arguments = nullptr;
    }
  } catch (const json::parse_error& e) {
    c.arguments = nullptr;
    c.arguments_error = fmt::format("tool arguments are not valid JSON: {}", e.what());
  }
  return c;
}

sampling effective(const request& req, const model_config& cfg) {
  sampling s = cfg.defaults;
  const sampling& r = req.params;
  if (r.temperature) s.temperature = r.temperature;
  if (r.top_p) s.top_p = r.top_p;
  if (r.max_output_tokens) s.max_output_tokens = r.max_output_tokens;
  if (r.reasoning_effort) s.reasoning_effort = r.reasoning_effort;
  if (r.seed) s.seed = r.seed;
  if (!r.stop.empty()) s.stop = r.stop;
  return s;
}

std::string system_text(const request& req) {
  std::string out;
  for (const auto& m : req.messages) {
    if (m.role != role::system) continue;
    if (!out.empty()) out += "\n\n";
    out += m.text;
  }
  return out;
}

std::int64_t int_at(const json& j, std::string_view key) {
  if (!j.is_object()) return 0;
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

std::vector<std::string> bearer_auth(const std::string& key) {
  if (key.empty()) return {};
  return {"Authorization: Bearer " + key};
}

std::string str_at(const json& j, std::string_view key) {
  if (!j.is_object()) return {};
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

json parse_json(std::string_view text, std::string_view what) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    const std::string head(text.substr(0, 200));
    throw protocol_failure{fmt::format("{} is not valid JSON ({}): {}", what, e.what(), head)};
  }
}

}  // namespace pk::llm::detail
