// Anthropic Messages. Thinking blocks (with their signatures) are kept as the assistant turn's
// opaque content and sent back verbatim, as the API requires when tools are used with thinking;
// cache_control markers go on the stable prefix (system prompt, tools) and on the newest turn so
// that each request reads the previous one's cache.
#include <map>

#include <fmt/format.h>

#include "agent/llm/provider.h"

namespace pk::llm::detail {
namespace {

constexpr std::string_view kProtocol = "anthropic";
constexpr std::int64_t default_max_tokens = 8192;

finish_reason map_stop(const std::string& s) {
  if (s == "end_turn" || s == "stop_sequence") return finish_reason::stop;
  if (s == "max_tokens" || s == "model_context_window_exceeded") return finish_reason::length;
  if (s == "tool_use") return finish_reason::tool_calls;
  if (s == "refusal") return finish_reason::content_filter;
  return finish_reason::other;
}

std::int64_t thinking_budget(const std::string& effort) {
  if (effort == "minimal") return 1024;
  if (effort == "low") return 2048;
  if (effort == "high") return 24576;
  return 8192;  // medium
}

usage read_usage(const json& u) {
  usage out;
  const auto read = int_at(u, "cache_read_input_tokens");
  const auto write = int_at(u, "cache_creation_input_tokens");
  out.input = int_at(u, "input_tokens") + read + write;  // input_tokens excludes the cache parts
  out.cached_input = read;
  out.cache_write = write;
  out.output = int_at(u, "output_tokens");
  return out;
}

response parse_message(const json& reply) {
  if (str_at(reply, "type") == "error") throw protocol_failure{"the reply is an error object", true};
  const auto content = reply.find("content");
  if (content == reply.end() || !content->is_array()) throw protocol_failure{"the reply has no content list"};
  response r;
  bool thinking = false;
  json replay = json::array();
  for (const auto& block : *content) {
    const std::string type = str_at(block, "type");
    json kept = block;
    if (type == "text") {
      r.text += str_at(block, "text");
    } else if (type == "tool_use") {
      const json& input = block.value("input", json::object());
      r.tool_calls.push_back(make_tool_call(str_at(block, "id"), str_at(block, "name"),
                                            input.is_string() ? input.get<std::string>() : input.dump()));
      if (!input.is_object()) kept["input"] = json::object();  // replayable even when the model erred
    } else if (type == "thinking" || type == "redacted_thinking") {
      thinking = true;
    }
    replay.push_back(std::move(kept));
  }
  r.finish_raw = str_at(reply, "stop_reason");
  r.finish = map_stop(r.finish_raw);
  r.tokens = read_usage(reply.value("usage", json::object()));
  r.model = str_at(reply, "model");
  if (thinking) r.opaque = json{{"protocol", kProtocol}, {"content", std::move(replay)}};
  r.raw = reply;
  return r;
}

class anthropic_stream : public stream_assembler {
 public:
  explicit anthropic_stream(std::function<void(std::string_view)> on_text) : on_text_(std::move(on_text)) {}

  void on_event(const sse_event& e) override {
    if (e.data.empty()) return;
    json ev = parse_json(e.data, "a stream event");
    const std::string type = str_at(ev, "type");
    if (type == "message_start") {
      message_ = ev.value("message", json::object());
      message_["content"] = json::array();
    } else if (type == "content_block_start") {
      blocks_[ev.value("index", 0)] = ev.value("content_block", json::object());
    } else if (type == "content_block_delta") {
      const int i = ev.value("index", 0);
      json& block = blocks_[i];
      const json& d = ev.value("delta", json::object());
      const std::string dt = str_at(d, "type");
      if (dt == "text_delta") {
        const std::string piece = str_at(d, "text");
        block["text"] = str_at(block, "text") + piece;
        if (on_text_) on_text_(piece);
      } else if (dt == "input_json_delta") {
        args_[i] += str_at(d, "partial_json");
      } else if (dt == "thinking_delta") {
        block["thinking"] = str_at(block, "thinking") + str_at(d, "thinking");
      } else if (dt == "signature_delta") {
        block["signature"] = str_at(block, "signature") + str_at(d, "signature");
      }
    } else if (type == "content_block_stop") {
      const int i = ev.value("index", 0);
      if (str_at(blocks_[i], "type") == "tool_use") {
        const std::string raw = args_[i].empty() ? "{}" : args_[i];
        try {
          blocks_[i]["input"] = json::parse(raw);
        } catch (const json::parse_error&) {
          blocks_[i]["input"] = raw;  // parse_message flags it
        }
      }
    } else if (type == "message_delta") {
      const json& d = ev.value("delta", json::object());
      if (d.contains("stop_reason")) message_["stop_reason"] = d["stop_reason"];
      if (auto u = ev.find("usage"); u != ev.end() && u->is_object()) {
        json& mu = message_["usage"];
        for (const auto& [k, v] : u->items())
          if (!v.is_null()) mu[k] = v;  // message_delta usage is cumulative
      }
    } else if (type == "message_stop") {
      done_ = true;
    } else if (type == "error") {
      const json& err = ev.value("error", json::object());
      throw protocol_failure{fmt::format("the provider sent an error in the stream: {}", err.dump()), true,
                             str_at(err, "message")};
    }
  }

  response finish() override {
    if (!done_) throw protocol_failure{"the stream ended before message_stop"};
    if (!message_.contains("stop_reason") || message_["stop_reason"].is_null())
      throw protocol_failure{"the stream ended without a stop_reason"};
    for (auto& [i, block] : blocks_) message_["content"].push_back(std::move(block));
    message_["streamed"] = true;
    return parse_message(message_);
  }

 private:
  std::function<void(std::string_view)> on_text_;
  json message_ = json::object();
  std::map<int, json> blocks_;
  std::map<int, std::string> args_;
  bool done_ = false;
};

json text_block(const std::string& text) { return {{"type", "text"}, {"text", text}}; }

class anthropic : public provider {
 public:
  std::string endpoint(const model_config& cfg) const override { return cfg.base_url + "/messages"; }

  std::vector<std::string> headers(const std::string& key) const override {
    std::vector<std::string> h{"anthropic-version: 2023-06-01"};
    if (!key.empty()) h.push_back("x-api-key: " + key);
    return h;
  }

  json body(const request& req, const model_config& cfg, bool stream) const override {
    json msgs = json::array();
    // Tool results and user text that follow each other form one user turn.
    auto user_turn = [&]() -> json& {
      if (msgs.empty() || msgs.back()["role"] != "user") msgs.push_back({{"role", "user"}, {"content", json::array()}});
      return msgs.back()["content"];
    };
    for (const auto& m : req.messages) {
      switch (m.role) {
        case role::system: break;
        case role::user:
          if (!m.text.empty()) user_turn().push_back(text_block(m.text));
          break;
        case role::tool: {
          json r{{"type", "tool_result"}, {"tool_use_id", m.tool_call_id}, {"content", m.text}};
          if (m.is_error) r["is_error"] = true;
          user_turn().push_back(std::move(r));
          break;
        }
        case role::assistant: {
          json content = json::array();
          if (m.opaque.is_object() && str_at(m.opaque, "protocol") == kProtocol) {
            content = m.opaque.value("content", json::array());
          } else {
            if (!m.text.empty()) content.push_back(text_block(m.text));
            for (const auto& c : m.tool_calls)
              content.push_back({{"type", "tool_use"},
                                 {"id", c.id},
                                 {"name", c.name},
                                 {"input", c.arguments.is_object() ? c.arguments : json::object()}});
          }
          if (!content.empty()) msgs.push_back({{"role", "assistant"}, {"content", std::move(content)}});
          break;
        }
      }
    }
    const sampling s = effective(req, cfg);
    json b{{"model", cfg.model}, {"messages", std::move(msgs)}};
    std::int64_t max_tokens = s.max_output_tokens.value_or(default_max_tokens);
    if (s.reasoning_effort) {
      const auto budget = thinking_budget(*s.reasoning_effort);
      b["thinking"] = {{"type", "enabled"}, {"budget_tokens", budget}};
      max_tokens = std::max(max_tokens, budget + 1024);  // the budget must stay below max_tokens
    } else {
      // With thinking on, the API fixes temperature and restricts top_p.
      if (s.temperature) b["temperature"] = *s.temperature;
      if (s.top_p) b["top_p"] = *s.top_p;
    }
    b["max_tokens"] = max_tokens;
    if (!s.stop.empty()) b["stop_sequences"] = s.stop;
    if (const std::string sys = system_text(req); !sys.empty()) b["system"] = json::array({text_block(sys)});
    if (!req.tools.empty()) {
      json tools = json::array();
      for (const auto& t : req.tools)
        tools.push_back({{"name", t.name}, {"description", t.description}, {"input_schema", t.parameters}});
      b["tools"] = std::move(tools);
    }
    if (cfg.prompt_cache) mark_cache(b);
    if (stream) b["stream"] = true;
    return b;
  }

  response parse(const json& reply) const override { return parse_message(reply); }

  std::unique_ptr<stream_assembler> stream(std::function<void(std::string_view)> on_text) const override {
    return std::make_unique<anthropic_stream>(std::move(on_text));
  }

 private:
  // At most four breakpoints are allowed; we use three: tools, system, newest turn.
  static void mark_cache(json& b) {
    const json marker{{"type", "ephemeral"}};
    if (b.contains("tools")) b["tools"].back()["cache_control"] = marker;
    if (b.contains("system")) b["system"].back()["cache_control"] = marker;
    if (b["messages"].empty()) return;
    json& last = b["messages"].back()["content"];
    if (!last.is_array() || last.empty()) return;
    const std::string t = str_at(last.back(), "type");
    if (t != "thinking" && t != "redacted_thinking") last.back()["cache_control"] = marker;
  }
};

}  // namespace

std::unique_ptr<provider> make_anthropic() { return std::make_unique<anthropic>(); }

}  // namespace pk::llm::detail
