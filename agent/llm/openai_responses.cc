// OpenAI Responses. Requests are stateless (store: false); reasoning items come back with their
// encrypted content and are replayed verbatim in the next request, together with the items that
// follow them, which is what the API requires to keep a model's reasoning across tool calls.
#include <fmt/format.h>

#include "agent/llm/provider.h"

namespace pk::llm::detail {
namespace {

constexpr std::string_view kProtocol = "openai-responses";

bool replayable(const json& item) {
  // Without store, a reasoning item can only be sent back with its encrypted content.
  return str_at(item, "type") != "reasoning" || item.contains("encrypted_content");
}

response parse_response(const json& reply) {
  const std::string status = str_at(reply, "status");
  if (status == "failed") {
    const json& err = reply.value("error", json::object());
    throw protocol_failure{fmt::format("the response failed: {}", err.dump()), true, str_at(err, "message")};
  }
  const auto output = reply.find("output");
  if (output == reply.end() || !output->is_array()) throw protocol_failure{"the reply has no output list"};
  response r;
  bool reasoning = false;
  bool refused = false;
  for (const auto& item : *output) {
    const std::string type = str_at(item, "type");
    if (type == "message") {
      for (const auto& part : item.value("content", json::array())) {
        const std::string pt = str_at(part, "type");
        if (pt == "output_text") r.text += str_at(part, "text");
        if (pt == "refusal") {
          r.text += str_at(part, "refusal");
          refused = true;
        }
      }
    } else if (type == "function_call") {
      r.tool_calls.push_back(make_tool_call(str_at(item, "call_id"), str_at(item, "name"), str_at(item, "arguments")));
    } else if (type == "reasoning") {
      reasoning = true;
    }
  }
  const json& u = reply.value("usage", json::object());
  r.tokens.input = int_at(u, "input_tokens");
  r.tokens.output = int_at(u, "output_tokens");
  r.tokens.cached_input = int_at(u.value("input_tokens_details", json::object()), "cached_tokens");
  r.tokens.reasoning = int_at(u.value("output_tokens_details", json::object()), "reasoning_tokens");
  r.finish_raw = status;
  if (status == "incomplete") {
    const std::string why = str_at(reply.value("incomplete_details", json::object()), "reason");
    r.finish_raw = why.empty() ? status : why;
    r.finish = why == "content_filter" ? finish_reason::content_filter : finish_reason::length;
  } else if (refused) {
    r.finish = finish_reason::content_filter;
  } else {
    r.finish = r.tool_calls.empty() ? finish_reason::stop : finish_reason::tool_calls;
  }
  r.model = str_at(reply, "model");
  if (reasoning) r.opaque = json{{"protocol", kProtocol}, {"output", *output}};
  r.raw = reply;
  return r;
}

class responses_stream : public stream_assembler {
 public:
  explicit responses_stream(std::function<void(std::string_view)> on_text) : on_text_(std::move(on_text)) {}

  void on_event(const sse_event& e) override {
    if (e.data.empty() || e.data == "[DONE]") return;
    json ev = parse_json(e.data, "a stream event");
    std::string type = str_at(ev, "type");
    if (type.empty()) type = e.event;
    if (type == "response.output_text.delta") {
      const std::string d = str_at(ev, "delta");
      if (on_text_) on_text_(d);
    } else if (type == "response.output_item.done") {
      if (ev.contains("item")) items_.push_back(ev["item"]);
    } else if (type == "response.completed" || type == "response.incomplete" || type == "response.failed") {
      final_ = ev.value("response", json::object());
    } else if (type == "error") {
      throw protocol_failure{fmt::format("the provider sent an error in the stream: {}", ev.dump()), true,
                             str_at(ev.contains("error") ? ev["error"] : ev, "message")};
    }
  }

  response finish() override {
    if (final_.is_null()) throw protocol_failure{"the stream ended before response.completed"};
    // Some gateways send the final response without its output; the items streamed carry it.
    const bool has_output = final_.contains("output") && final_["output"].is_array() && !final_["output"].empty();
    if (!has_output && !items_.empty()) final_["output"] = items_;
    return parse_response(final_);
  }

 private:
  std::function<void(std::string_view)> on_text_;
  json items_ = json::array();
  json final_;
};

class openai_responses : public provider {
 public:
  std::string endpoint(const model_config& cfg) const override { return cfg.base_url + "/responses"; }

  std::vector<std::string> headers(const std::string& key) const override { return bearer_auth(key); }

  json body(const request& req, const model_config& cfg, bool stream) const override {
    json input = json::array();
    for (const auto& m : req.messages) {
      switch (m.role) {
        case role::system: break;  // -> instructions
        case role::user: input.push_back({{"role", "user"}, {"content", m.text}}); break;
        case role::tool:
          input.push_back({{"type", "function_call_output"}, {"call_id", m.tool_call_id}, {"output", m.text}});
          break;
        case role::assistant:
          if (m.opaque.is_object() && str_at(m.opaque, "protocol") == kProtocol) {
            for (const auto& item : m.opaque.value("output", json::array()))
              if (replayable(item)) input.push_back(item);
            break;
          }
          if (!m.text.empty()) input.push_back({{"role", "assistant"}, {"content", m.text}});
          for (const auto& c : m.tool_calls)
            input.push_back({{"type", "function_call"},
                             {"call_id", c.id},
                             {"name", c.name},
                             {"arguments", c.arguments_text.empty() ? c.arguments.dump() : c.arguments_text}});
          break;
      }
    }
    json b{{"model", cfg.model}, {"input", std::move(input)}, {"store", false}};
    if (const std::string sys = system_text(req); !sys.empty()) b["instructions"] = sys;
    if (!req.tools.empty()) {
      json tools = json::array();
      for (const auto& t : req.tools)
        tools.push_back({{"type", "function"}, {"name", t.name}, {"description", t.description}, {"parameters", t.parameters}});
      b["tools"] = std::move(tools);
    }
    const sampling s = effective(req, cfg);
    if (s.temperature) b["temperature"] = *s.temperature;
    if (s.top_p) b["top_p"] = *s.top_p;
    if (s.max_output_tokens) b["max_output_tokens"] = *s.max_output_tokens;
    if (s.reasoning_effort) {
      b["reasoning"] = {{"effort", *s.reasoning_effort}, {"summary", "auto"}};
      b["include"] = json::array({"reasoning.encrypted_content"});
    }
    // The Responses API has no seed and no stop sequences: they are not sent.
    if (stream) b["stream"] = true;
    return b;
  }

  response parse(const json& reply) const override { return parse_response(reply); }

  std::unique_ptr<stream_assembler> stream(std::function<void(std::string_view)> on_text) const override {
    return std::make_unique<responses_stream>(std::move(on_text));
  }
};

}  // namespace

std::unique_ptr<provider> make_openai_responses() { return std::make_unique<openai_responses>(); }

}  // namespace pk::llm::detail
