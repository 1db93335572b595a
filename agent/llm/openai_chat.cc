// OpenAI Chat Completions: OpenAI, Together, OpenRouter, DeepSeek, Gemini's OpenAI endpoint,
// vLLM, SGLang, llama.cpp server. Reasoning text that some servers return (reasoning_content)
// is kept in the opaque items for the transcript but not sent back: most servers reject it.
#include <map>

#include <fmt/format.h>

#include "agent/llm/provider.h"

namespace pk::llm::detail {
namespace {

constexpr std::string_view kProtocol = "openai-chat";

finish_reason map_finish(const std::string& f) {
  if (f == "stop") return finish_reason::stop;
  if (f == "length") return finish_reason::length;
  if (f == "tool_calls" || f == "function_call") return finish_reason::tool_calls;
  if (f == "content_filter") return finish_reason::content_filter;
  return finish_reason::other;
}

usage read_usage(const json& u) {
  usage out;
  if (!u.is_object()) return out;
  out.input = int_at(u, "prompt_tokens");
  out.output = int_at(u, "completion_tokens");
  if (auto d = u.find("prompt_tokens_details"); d != u.end()) out.cached_input = int_at(*d, "cached_tokens");
  if (out.cached_input == 0) out.cached_input = int_at(u, "prompt_cache_hit_tokens");  // DeepSeek
  if (auto d = u.find("completion_tokens_details"); d != u.end()) out.reasoning = int_at(*d, "reasoning_tokens");
  return out;
}

json opaque_of(const std::string& reasoning) {
  if (reasoning.empty()) return nullptr;
  return json{{"protocol", kProtocol}, {"reasoning_content", reasoning}};
}

void finish_common(response& r) {
  if (!r.tool_calls.empty() && r.finish == finish_reason::other) r.finish = finish_reason::tool_calls;
}

class chat_stream : public stream_assembler {
 public:
  explicit chat_stream(std::function<void(std::string_view)> on_text) : on_text_(std::move(on_text)) {}

  void on_event(const sse_event& e) override {
    if (e.data == "[DONE]") {
      done_ = true;
      return;
    }
    if (e.data.empty()) return;
    json chunk = parse_json(e.data, "a stream chunk");
    if (chunk.contains("error")) {
      throw protocol_failure{fmt::format("the provider sent an error in the stream: {}", chunk["error"].dump()),
                             true, chunk["error"].is_object() ? str_at(chunk["error"], "message") : ""};
    }
    saw_chunk_ = true;
    if (model_.empty()) model_ = str_at(chunk, "model");
    if (id_.empty()) id_ = str_at(chunk, "id");
    if (auto u = chunk.find("usage"); u != chunk.end() && u->is_object()) usage_ = *u;
    const auto choices = chunk.find("choices");
    if (choices == chunk.end() || !choices->is_array()) return;
    for (const auto& choice : *choices) {
      if (choice.value("index", 0) != 0) continue;
      saw_choice_ = true;
      if (auto f = choice.find("finish_reason"); f != choice.end() && f->is_string()) finish_ = f->get<std::string>();
      const auto delta = choice.find("delta");
      if (delta == choice.end() || !delta->is_object()) continue;
      if (auto c = delta->find("content"); c != delta->end() && c->is_string()) {
        const auto& piece = c->get_ref<const std::string&>();
        text_ += piece;
        if (on_text_) on_text_(piece);
      }
      for (const char* k : {"reasoning_content", "reasoning"})
        if (auto c = delta->find(k); c != delta->end() && c->is_string()) reasoning_ += c->get<std::string>();
      if (auto tcs = delta->find("tool_calls"); tcs != delta->end() && tcs->is_array()) {
        for (const auto& tc : *tcs) {
          auto& slot = calls_[tc.value("index", 0)];
          if (auto id = str_at(tc, "id"); !id.empty()) slot.id = id;
          if (auto fn = tc.find("function"); fn != tc.end() && fn->is_object()) {
            if (auto n = str_at(*fn, "name"); !n.empty()) slot.name += n;
            slot.args += str_at(*fn, "arguments");
          }
        }
      }
    }
  }

  response finish() override {
    // Without [DONE] or a finish_reason the stream was cut: the text may be incomplete.
    if (!done_ && finish_.empty())
      throw protocol_failure{saw_chunk_ ? "the stream ended before the reply was complete"
                                        : "the stream ended without any event"};
    if (!saw_choice_) throw protocol_failure{"the stream carried no choices"};
    response r;
    r.text = std::move(text_);
    for (auto& [index, c] : calls_) r.tool_calls.push_back(make_tool_call(c.id, c.name, c.args));
    r.finish_raw = finish_;
    r.finish = map_finish(finish_);
    r.tokens = read_usage(usage_);
    r.model = model_;
    r.opaque = opaque_of(reasoning_);
    r.raw = json{{"id", id_},         {"model", model_},  {"streamed", true},
                 {"content", r.text}, {"finish_reason", finish_}, {"usage", usage_}};
    if (!reasoning_.empty()) r.raw["reasoning_content"] = reasoning_;
    json calls = json::array();
    for (const auto& c : r.tool_calls)
      calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments_text}});
    r.raw["tool_calls"] = std::move(calls);
    finish_common(r);
    return r;
  }

 private:
  struct partial_call {
    std::string id, name, args;
  };
  std::function<void(std::string_view)> on_text_;
  std::string text_, reasoning_, finish_, model_, id_;
  std::map<int, partial_call> calls_;
  json usage_;
  bool done_ = false;
  bool saw_chunk_ = false;
  bool saw_choice_ = false;
};

class openai_chat : public provider {
 public:
  std::string endpoint(const model_config& cfg) const override { return cfg.base_url + "/chat/completions"; }

  std::vector<std::string> headers(const std::string& key) const override { return bearer_auth(key); }

  json body(const request& req, const model_config& cfg, bool stream) const override {
    json msgs = json::array();
    for (const auto& m : req.messages) {
      switch (m.role) {
        case role::system: msgs.push_back({{"role", "system"}, {"content", m.text}}); break;
        case role::user: msgs.push_back({{"role", "user"}, {"content", m.text}}); break;
        case role::tool:
          msgs.push_back({{"role", "tool"}, {"tool_call_id", m.tool_call_id}, {"content", m.text}});
          break;
        case role::assistant: {
          json a{{"role", "assistant"}};
          a["content"] = m.text.empty() && !m.tool_calls.empty() ? json(nullptr) : json(m.text);
          if (!m.tool_calls.empty()) {
            json calls = json::array();
            for (const auto& c : m.tool_calls)
              calls.push_back({{"id", c.id},
                               {"type", "function"},
                               {"function", {{"name", c.name}, {"arguments", c.arguments_text.empty() ? c.arguments.dump() : c.arguments_text}}}});
            a["tool_calls"] = std::move(calls);
          }
          msgs.push_back(std::move(a));
          break;
        }
      }
    }
    json b{{"model", cfg.model}, {"messages", std::move(msgs)}};
    if (!req.tools.empty()) {
      json tools = json::array();
      for (const auto& t : req.tools)
        tools.push_back({{"type", "function"},
                         {"function", {{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}}}});
      b["tools"] = std::move(tools);
    }
    const sampling s = effective(req, cfg);
    if (s.temperature) b["temperature"] = *s.temperature;
    if (s.top_p) b["top_p"] = *s.top_p;
    // OpenAI's reasoning models refuse max_tokens; most other servers only know max_tokens.
    if (s.max_output_tokens)
      b[cfg.base_url.find("api.openai.com") != std::string::npos ? "max_completion_tokens" : "max_tokens"] =
          *s.max_output_tokens;
    if (s.reasoning_effort) b["reasoning_effort"] = *s.reasoning_effort;
    if (s.seed) b["seed"] = *s.seed;
    if (!s.stop.empty()) b["stop"] = s.stop;
    if (stream) {
      b["stream"] = true;
      b["stream_options"] = {{"include_usage", true}};
    }
    return b;
  }

  response parse(const json& reply) const override {
    const auto choices = reply.find("choices");
    if (choices == reply.end() || !choices->is_array() || choices->empty())
      throw protocol_failure{"the reply has no choices"};
    const json& choice = (*choices)[0];
    const json& msg = choice.value("message", json::object());
    response r;
    r.text = str_at(msg, "content");
    if (auto tcs = msg.find("tool_calls"); tcs != msg.end() && tcs->is_array())
      for (const auto& tc : *tcs) {
        const json& fn = tc.value("function", json::object());
        const auto args = fn.find("arguments");
        std::string text = args == fn.end() ? "" : args->is_string() ? args->get<std::string>() : args->dump();
        r.tool_calls.push_back(make_tool_call(str_at(tc, "id"), str_at(fn, "name"), std::move(text)));
      }
    r.finish_raw = str_at(choice, "finish_reason");
    r.finish = map_finish(r.finish_raw);
    r.tokens = read_usage(reply.value("usage", json::object()));
    r.model = str_at(reply, "model");
    std::string reasoning = str_at(msg, "reasoning_content");
    if (reasoning.empty()) reasoning = str_at(msg, "reasoning");
    r.opaque = opaque_of(reasoning);
    r.raw = reply;
    finish_common(r);
    return r;
  }

  std::unique_ptr<stream_assembler> stream(std::function<void(std::string_view)> on_text) const override {
    return std::make_unique<chat_stream>(std::move(on_text));
  }
};

}  // namespace

std::unique_ptr<provider> make_openai_chat() { return std::make_unique<openai_chat>(); }

}  // namespace pk::llm::detail
