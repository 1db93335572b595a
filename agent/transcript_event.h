// The events of an episode transcript as typed structs, and their JSON (the transcript's lines).
// Agent episodes and zero-shot completions write the same events through one writer
// (transcript.h); docs/transcript.md is the format.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/action.h"
#include "agent/agent_config.h"
#include "agent/limits.h"
#include "agent/llm/llm.h"
#include "sandbox/sandbox.h"

namespace pk::agent {

inline constexpr const char* transcript_format = "pkagent-transcript";
inline constexpr int transcript_version = 1;

// The LLM types as transcript JSON (and back, for replay).
nlohmann::json to_json(const llm::message& m);
nlohmann::json to_json(const llm::usage& u);
nlohmann::json to_json(const llm::response& r);
llm::message message_from_json(const nlohmann::json& j);
llm::usage usage_from_json(const nlohmann::json& j);
llm::response response_from_json(const nlohmann::json& j);

/// An event line that is not what its type requires; the message names the field.
class transcript_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What produced the transcript.
enum class episode_mode {
  agent,     ///< the agent loop (steps of actions and observations)
  zeroshot,  ///< one completion (one request and one response)
};
std::string_view to_string(episode_mode m);

/// `pkagent`: the build that wrote the transcript.
struct build_stamp {
  std::string version;
  std::string commit;
};
/// The build running now.
build_stamp this_build();

/// Where an agent episode's files came from (`task.workspace`, `task.content_sha256`, `task.check`).
struct task_origin {
  std::string workspace;              ///< absolute path of the directory copied to OUT/workspace
  std::string content_sha256;         ///< of the task text and the workspace's files
  std::optional<std::string> check;   ///< absolute path of the check script; null: none
};

/// `task`.
struct task_record {
  std::string id;
  std::string text;
  std::optional<task_origin> origin;  ///< agent episodes only
};

/// How an agent episode was set up (`config`, `seed`, `sandbox`, `parent`).
struct episode_setup {
  agent_config config;
  std::optional<std::int64_t> seed;
  sandbox::isolation isolation = sandbox::isolation::bwrap;
  std::vector<int> gpus;
  /// null for a fresh episode; resume: {"resumed_from", "replayed_steps", "original_parent"};
  /// fork and replay: {"transcript", "step"}. Kept as JSON: it nests the parent's own parent.
  nlohmann::json parent;
  /// The tools bound into the sandbox besides the shell, as their owner describes them (a run
  /// episode's {"pkb": {...}}); null: none. Replay and fork attach them again.
  nlohmann::json tools;
};

/// `header`: the first line.
struct header_event {
  int version = transcript_version;   ///< as read; the writer writes transcript_version
  episode_mode mode = episode_mode::agent;
  build_stamp pkagent;
  nlohmann::json model;                ///< model_record(): names, prices, the key's variable name
  task_record task;
  std::optional<episode_setup> setup;  ///< agent episodes only
  nlohmann::json host;                 ///< host_summary()
  std::string started_at;              ///< UTC, ISO 8601
};

/// `request`: before each model call; the messages added since the previous request.
struct request_event {
  int step = 0;
  std::optional<int> base_step;        ///< the step whose request this one extends; none: the first
  std::vector<llm::message> new_messages;
  std::size_t messages_total = 0;
  std::vector<llm::tool_spec> tools;   ///< first request of the tools format only
};

/// `response`: after each model call.
struct response_event {
  int step = 0;
  bool replayed = false;               ///< played from an earlier transcript, no model call
  llm::response response;
  std::optional<action> parsed_action; ///< `action`: agent episodes only (call ids are not recorded)
};

/// One output stream of a command: the text as captured and the bytes the command wrote.
struct stream_record {
  std::string text;
  std::uint64_t bytes = 0;
};

/// What the sandbox reported for a `bash` action.
struct command_record {
  int exit_code = -1;
  int signal = 0;
  bool timed_out = false;
  bool oom_killed = false;
  double wall_seconds = 0;
  double cpu_seconds = 0;
  std::string note;
  stream_record out, err;  ///< `stdout`, `stderr`
};
command_record record_of(const sandbox::result& r);

/// `observation`: after each action.
struct observation_event {
  int step = 0;
  enum action::kind kind = action::invalid;
  std::optional<command_record> command;  ///< a `bash` action that ran
  std::optional<std::string> text;        ///< what the model was sent; none for submit
};

/// `evaluation`: after a submit, when the task has a check.
struct evaluation_event {
  bool passed = false;
  double score = 0;
  double gpu_seconds = 0;
  nlohmann::json details;
};

/// `outcome`: the last line.
struct outcome_event {
  end_reason reason = end_reason::model_error;
  std::string message;
  std::optional<double> score;            ///< none without an evaluation
  usage_so_far used;                      ///< `steps` and `totals`
  std::int64_t cached_input_tokens = 0;   ///< `totals.cached_input_tokens`
};

using transcript_event = std::variant<header_event, request_event, response_event, observation_event,
                                      evaluation_event, outcome_event>;

/// The event as its transcript line, with its "type" (the writer adds "t").
nlohmann::json to_json(const transcript_event& e);
/// Reads an event line of any version up to transcript_version. Throws transcript_error naming
/// the type and the field that is missing or wrong.
transcript_event event_from_json(const nlohmann::json& j);

/// The event of type T in `j`; throws transcript_error when `j` holds another type.
template <class T>
T event_as(const nlohmann::json& j) {
  transcript_event e = event_from_json(j);
  if (T* got = std::get_if<T>(&e)) return std::move(*got);
  throw transcript_error("the line holds an event of another type: " + j.value("type", std::string("?")));
}

}  // namespace pk::agent
