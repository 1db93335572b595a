// The client behind make_client: one provider (wire format) + the shared HTTP, SSE, retry and
// accounting path. The API key is read from the environment once, kept only here, and scrubbed
// from every message that leaves this file.
#include <chrono>
#include <cstdlib>
#include <thread>
#include <variant>

#include <fmt/format.h>

#include "agent/llm/http.h"
#include "agent/llm/provider.h"
#include "agent/llm/retry.h"

namespace pk::llm {
namespace {

using namespace detail;
using clock = std::chrono::steady_clock;

std::string redact(std::string text, const std::string& key) {
  if (key.size() < 4) return text;
  for (auto pos = text.find(key); pos != std::string::npos; pos = text.find(key, pos))
    text.replace(pos, key.size(), "[redacted]");
  return text;
}

std::string brief(std::string_view body) {
  constexpr std::size_t limit = 500;
  return body.size() <= limit ? std::string(body) : fmt::format("{}... ({} bytes)", body.substr(0, limit), body.size());
}

std::unique_ptr<provider> provider_for(protocol p) {
  switch (p) {
    case protocol::openai_chat: return make_openai_chat();
    case protocol::openai_responses: return make_openai_responses();
    case protocol::anthropic: return make_anthropic();
  }
  throw llm_error(llm_error::kind::config, "unknown protocol");
}

class http_client : public client {
 public:
  http_client(model_config cfg, std::string key)
      : cfg_(std::move(cfg)), key_(std::move(key)), wire_(provider_for(cfg_.provider)) {}

  response complete(const request& req) override {
    const auto start = clock::now();
    thread_local std::mt19937_64 rng{std::random_device{}()};
    millis waited{0};
    for (int attempt = 0;; ++attempt) {
      std::variant<response, attempt_failure> result = once(req);
      if (auto* r = std::get_if<response>(&result)) {
        r->retries = attempt;
        r->latency = std::chrono::duration_cast<millis>(clock::now() - start);
        r->cost_usd = cost_usd(r->tokens, cfg_.price);
        return std::move(*r);
      }
      attempt_failure& f = std::get<attempt_failure>(result);
      f.message = redact(std::move(f.message), key_);
      f.provider_message = redact(std::move(f.provider_message), key_);
      if (!f.retryable) throw llm_error(f.kind, describe(f, attempt), f.status, f.provider_message, attempt);
      if (attempt >= cfg_.retry.max_retries) give_up(f, attempt, "no retries left");
      const millis wait = retry_wait(cfg_.retry, attempt, f.retry_after, rng);
      if (waited + wait > cfg_.retry.max_total_wait)
        give_up(f, attempt,
                fmt::format("waiting {} ms more would pass the total wait limit of {} ms", wait.count(),
                            cfg_.retry.max_total_wait.count()));
      std::this_thread::sleep_for(wait);
      waited += wait;
    }
  }

 private:
  std::string describe(const attempt_failure& f, int retries) const {
    std::string where = fmt::format("model '{}' ({} at {})", cfg_.name, to_string(cfg_.provider), cfg_.base_url);
    std::string s = fmt::format("{}: {}", where, f.message);
    if (retries > 0) s += fmt::format(" (after {} {})", retries, retries == 1 ? "retry" : "retries");
    return s;
  }

  [[noreturn]] void give_up(const attempt_failure& f, int attempt, const std::string& why) const {
    const auto kind = attempt == 0 ? f.kind : llm_error::kind::retries_exhausted;
    throw llm_error(kind, fmt::format("{}; giving up: {}", describe(f, attempt), why), f.status, f.provider_message,
                    attempt);
  }

  std::variant<response, attempt_failure> once(const request& req) const {
    const bool stream = req.stream.value_or(cfg_.stream);
    http_request h;
    h.url = wire_->endpoint(cfg_);
    json body = wire_->body(req, cfg_, stream);
    if (!cfg_.extra_body.empty()) body.merge_patch(cfg_.extra_body);
    h.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
    h.headers = wire_->headers(key_);
    h.headers.push_back("Content-Type: application/json");
    h.headers.push_back(stream ? "Accept: text/event-stream" : "Accept: application/json");
    h.headers.push_back("Expect:");  // no 100-continue round trip for large prompts
    h.limits = cfg_.timeout;
    h.idle_timeout = stream;

    std::unique_ptr<stream_assembler> assembler = wire_->stream(req.on_text);
    sse_parser parser;
    std::optional<protocol_failure> stream_error;
    auto on_stream = [&](std::string_view chunk) {
      try {
        parser.feed(chunk, [&](const sse_event& e) { assembler->on_event(e); });
        return true;
      } catch (protocol_failure& p) {  // never let an exception cross curl's C frames
        stream_error = std::move(p);
        return false;
      } catch (const std::exception& e) {
        stream_error = protocol_failure{e.what()};
        return false;
      }
    };
    http_outcome out = http_post(h, on_stream);

    using F = http_outcome::failure;
    if (stream_error) return from_protocol(*stream_error, static_cast<int>(out.status));
    switch (out.fail) {
      case F::none: break;
      case F::aborted: return attempt_failure{llm_error::kind::protocol, true, 0, out.error, {}, {}};
      case F::connect:
        return attempt_failure{llm_error::kind::connection, true, 0, fmt::format("cannot connect: {}", out.error), {}, {}};
      case F::broken:
        return attempt_failure{llm_error::kind::connection, true, static_cast<int>(out.status),
                               fmt::format("the connection broke: {}", out.error), {}, {}};
      case F::connect_timeout:
        return attempt_failure{llm_error::kind::timeout, true, 0,
                               fmt::format("connect timeout after {} ms", cfg_.timeout.connect.count()), {}, {}};
      case F::request_timeout:
        return attempt_failure{llm_error::kind::timeout, true, 0,
                               fmt::format("the request took longer than {} ms", cfg_.timeout.request.count()), {}, {}};
      case F::idle_timeout:
        return attempt_failure{llm_error::kind::timeout, true, 0,
                               fmt::format("no data for {} ms (idle timeout)", cfg_.timeout.idle.count()), {}, {}};
    }
    const int status = static_cast<int>(out.status);
    if (status < 200 || status >= 300) {
      std::string provider_message;
      try {
        provider_message = wire_->error_message(json::parse(out.body));
      } catch (const json::exception&) {
      }
      if (provider_message.empty()) provider_message = brief(out.body);
      attempt_failure f{llm_error::kind::http_status, retryable_status(status), status,
                        fmt::format("HTTP {}: {}", status, provider_message), provider_message, out.retry_after};
      if (status == 401 || status == 403)
        f.message += cfg_.api_key_env.empty() ? "" : fmt::format(" (check the key in {})", cfg_.api_key_env);
      if ((status == 400 || status == 413) && says_context_overflow(out.body))
        f.kind = llm_error::kind::context_overflow;
      return f;
    }
    try {
      if (out.event_stream) return assembler->finish();
      return wire_->parse(parse_json(out.body, "the reply"));
    } catch (const protocol_failure& p) {
      return from_protocol(p, status);
    }
  }

  static attempt_failure from_protocol(const protocol_failure& p, int status) {
    return attempt_failure{llm_error::kind::protocol, p.retryable, status, p.message, p.provider_message, {}};
  }

  model_config cfg_;
  std::string key_;
  std::unique_ptr<provider> wire_;
};

}  // namespace

std::unique_ptr<client> make_client(const model_config& cfg) {
  std::string key;
  if (!cfg.api_key_env.empty()) {
    const char* v = std::getenv(cfg.api_key_env.c_str());
    if (v != nullptr) key = v;
    if (key.empty() && !cfg.key_optional)
      throw llm_error(llm_error::kind::config,
                      fmt::format("model '{}' needs an API key: set the environment variable {}", cfg.name,
                                  cfg.api_key_env));
  }
  return std::make_unique<http_client>(cfg, std::move(key));
}

}  // namespace pk::llm
