// The model interface of pkagent: one typed request/response shape for every provider
// (OpenAI Chat Completions, OpenAI Responses, Anthropic Messages), the model table
// (config/models.toml) and the error type. Providers translate to and from their wire JSON
// at the edge; everything inside pkagent sees these structs only.
//
// Thread safety: make_client's clients hold no per-call state (a curl handle per call), so one
// client may serve many episodes concurrently.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace pk::llm {

using json = nlohmann::json;
using millis = std::chrono::milliseconds;

enum class role { system, user, assistant, tool };
std::string_view to_string(role r);

/// A tool invocation requested by the model.
struct tool_call {
  std::string id;
  std::string name;
  /// The parsed arguments (normally an object). When the model wrote text that is not JSON,
  /// this is null and `arguments_error` says why; `arguments_text` always holds the raw text.
  json arguments;
  std::string arguments_text;
  std::string arguments_error;  ///< empty when the arguments parsed
  bool arguments_valid() const { return arguments_error.empty(); }
};

/// One conversation turn.
struct message {
  pk::llm::role role = pk::llm::role::user;
  std::string text;
  std::vector<tool_call> tool_calls;  ///< assistant turns: the calls the model made
  std::string tool_call_id;           ///< tool turns: which call this is the result of
  std::string tool_name;              ///< tool turns: the tool's name (some providers want it)
  bool is_error = false;              ///< tool turns: the tool failed (Anthropic's is_error)
  /// Provider-specific items that must travel back verbatim on the next request: reasoning items
  /// (OpenAI Responses), thinking blocks with signatures (Anthropic), reasoning_content
  /// (DeepSeek-style chat). Shape: {"protocol": "<provider>", ...}; a provider ignores items
  /// whose protocol is not its own, so histories survive a change of model. Null when none.
  json opaque;
};

message system_message(std::string text);
message user_message(std::string text);
/// The result of tool call `call_id` (`name` is the tool's name), to append after the assistant turn.
message tool_result(std::string call_id, std::string name, std::string text, bool is_error = false);

/// A tool the model may call: name, description and the JSON Schema of its arguments.
struct tool_spec {
  std::string name;
  std::string description;
  json parameters = json::object();  ///< JSON Schema ("type": "object", ...)
};

struct sampling {
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<std::int64_t> max_output_tokens;
  std::optional<std::string> reasoning_effort;  ///< "minimal" | "low" | "medium" | "high"
  std::optional<std::int64_t> seed;
  std::vector<std::string> stop;
};

struct request {
  std::vector<message> messages;
  std::vector<tool_spec> tools;
  /// Fields set here override the model's defaults (model_config::defaults).
  sampling params;
  /// nullopt: the model's default (streaming unless models.toml says otherwise).
  std::optional<bool> stream;
  /// Called with each text delta while streaming (progress display); may be empty.
  std::function<void(std::string_view)> on_text;
};

/// Token counts. `input` counts every prompt token, cached ones included; `cached_input` is the
/// part read from a prompt cache, `cache_write` the part written to one (Anthropic charges it
/// extra). `output` includes `reasoning`.
struct usage {
  std::int64_t input = 0;
  std::int64_t cached_input = 0;
  std::int64_t cache_write = 0;
  std::int64_t output = 0;
  std::int64_t reasoning = 0;
  usage& operator+=(const usage& o);
  bool operator==(const usage&) const = default;
};

enum class finish_reason { stop, length, tool_calls, content_filter, other };
std::string_view to_string(finish_reason f);

struct response {
  std::string text;
  std::vector<tool_call> tool_calls;
  finish_reason finish = finish_reason::other;
  std::string finish_raw;  ///< the provider's own word ("end_turn", "stop", "max_tokens" ...)
  usage tokens;
  json raw;  ///< the provider's JSON (assembled from the events when streamed)
  json opaque;  ///< provider items to carry into the next request (see message::opaque)
  std::string model;  ///< the model id the provider reports
  millis latency{0};  ///< wall time of complete(), retries and waits included
  int retries = 0;    ///< attempts beyond the first
  double cost_usd = 0;  ///< from usage and the model's prices; 0 when prices are unknown

  /// The assistant turn to append to the conversation (text, tool calls, opaque items).
  message to_message() const;
};

enum class protocol { openai_chat, openai_responses, anthropic };
std::string_view to_string(protocol p);

/// USD per million tokens. cache_write defaults to `input` when models.toml omits it.
struct prices {
  double input = 0;
  double cached_input = 0;
  double cache_write = 0;
  double output = 0;
  bool known = false;  ///< false: cost is reported as 0 and flagged in docs/models.md
};

struct retry_policy {
  int max_retries = 6;
  millis initial_backoff{1000};  ///< the first retry waits up to this (full jitter)
  millis max_backoff{60000};     ///< cap of one wait (Retry-After longer than this is still honoured up to max_total_wait)
  millis max_total_wait{600000};  ///< give up when the waits together would exceed this
};

struct timeouts {
  millis connect{10000};
  millis request{900000};  ///< the whole call, one attempt
  millis idle{120000};     ///< no byte received for this long
};

struct model_config {
  std::string name;  ///< the name in models.toml, or the spec given on the command line
  protocol provider = protocol::openai_chat;
  std::string base_url;  ///< e.g. https://api.openai.com/v1 (no trailing endpoint)
  std::string model;     ///< the provider's model id
  std::string api_key_env;  ///< the environment variable holding the key; empty: no key
  bool key_optional = false;  ///< send no key when the variable is unset (self-hosted servers)
  prices price;
  std::int64_t context_window = 0;  ///< tokens; 0 when unknown
  sampling defaults;
  bool stream = true;
  bool prompt_cache = true;  ///< Anthropic: put cache_control markers on the stable prefix
  json extra_body = json::object();  ///< merged into every request body (provider extras)
  retry_policy retry;
  timeouts timeout;
};

/// Cost in USD of `u` at `p` (0 when the prices are unknown).
double cost_usd(const usage& u, const prices& p);

/// The model interface. Implementations: make_client's HTTP clients, scripted test clients.
class client {
 public:
  virtual ~client() = default;
  /// Runs one model call. Throws llm_error when it cannot produce a response.
  virtual response complete(const request& req) = 0;
};

/// A client for `cfg`, reading its key from the environment now (never stored in cfg).
std::unique_ptr<client> make_client(const model_config& cfg);

/// The output limit an "openai-compatible:URL#MODEL" model gets when nothing sets one: without
/// it, self-hosted servers (llama.cpp, vLLM) generate until the context is full, and the next
/// step of an episode no longer fits. Enough for a whole kernel file in one reply.
inline constexpr std::int64_t compatible_max_output_tokens = 4096;

/// The name a model is recorded under (transcripts, run plans, results): a models.toml name as
/// it is; for "openai-compatible:http://HOST:PORT/PATH#MODEL" the spec without scheme and port,
/// "openai-compatible:HOST/PATH#MODEL", so that a server restarted on another port is the same
/// model to a resumed run and to reports. Not itself a spec (resolve_model refuses it).
std::string model_identity(const std::string& name_or_spec);

/// Resolves `name_or_spec`: a model name from `models_toml`, or
/// "openai-compatible:URL#MODEL" (no config entry; OPENAI_API_KEY sent as bearer when set;
/// named by model_identity; output limited to compatible_max_output_tokens).
/// Throws llm_error{kind::config} for an unknown name or an unset key variable, naming the
/// variable to set; models.toml syntax and type errors throw pk::config::config_error.
model_config resolve_model(const std::string& name_or_spec, const std::filesystem::path& models_toml);

/// Every model in models_toml, sorted by name (for `pkagent models`).
std::vector<model_config> load_models(const std::filesystem::path& models_toml);

class llm_error : public std::runtime_error {
 public:
  enum class kind {
    retries_exhausted,  ///< a retryable failure persisted past max_retries / max_total_wait
    http_status,        ///< a non-retryable HTTP status (401, 400 ...)
    protocol,           ///< the provider's reply could not be understood
    timeout,            ///< connect / request / idle timeout (once retries are exhausted)
    connection,         ///< could not connect, or the connection broke (once retries are exhausted)
    config,             ///< unknown model, missing key variable, bad spec
    context_overflow,   ///< the provider refused the request: the prompt does not fit its context
  };
  llm_error(kind k, std::string message, int status = 0, std::string provider_message = {},
            int retries = 0);
  kind what_kind() const { return kind_; }
  int status() const { return status_; }  ///< HTTP status, 0 when none
  const std::string& provider_message() const { return provider_message_; }
  int retries() const { return retries_; }

 private:
  kind kind_;
  int status_;
  std::string provider_message_;
  int retries_;
};
std::string_view to_string(llm_error::kind k);

/// Totals over many calls (an episode, a run); safe to add to from many threads.
class usage_totals {
 public:
  struct snapshot {
    std::int64_t calls = 0;
    std::int64_t retries = 0;
    usage tokens;
    double cost_usd = 0;
    millis latency{0};
  };
  void add(const response& r, const std::string& model_name = {});
  snapshot total() const;
  std::map<std::string, snapshot> by_model() const;

 private:
  mutable std::mutex mu_;
  snapshot total_;
  std::map<std::string, snapshot> by_model_;
};

}  // namespace pk::llm
