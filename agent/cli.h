// `pkagent models` (the model table), `pkagent episode` (run or resume one episode) and
// `pkagent replay` (render, re-execute, fork); and the options every agent command shares.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <functional>
#include <memory>

#include <CLI/CLI.hpp>

#include "agent/episode.h"
#include "agent/transcript.h"
#include "bench/device_kind.h"
#include "sandbox/spec.h"

namespace pk::agent {

/// Where the options that episode, replay and run share land: the caller binds them straight
/// into its own option struct, whose defaults stand where a flag is not given.
struct shared_options {
  std::filesystem::path& config;        ///< --config: agent settings; empty: config/agent.toml
  std::vector<std::string>& overrides;  ///< --set TABLE.KEY=VALUE, repeatable
  std::filesystem::path& prompts;       ///< --prompts: templates directory; empty: prompts/
  std::filesystem::path& models;        ///< --models: the model table; empty: config/models.toml
  sandbox::isolation& isolation;        ///< --sandbox bwrap|none
  bool& quiet;                          ///< -q, --quiet
};

/// Adds --config --set --prompts --models --sandbox -q to `c`.
void add_shared_options(CLI::App& c, const shared_options& to);

/// Adds --model: a name from the model table, demo[:SCRIPT], or openai-compatible:URL#MODEL.
CLI::Option* add_model_option(CLI::App& c, std::string& model, const std::string& role);

/// Adds --max-output-tokens: output tokens per model reply (unset: the model's own limit).
CLI::Option* add_max_output_tokens_option(CLI::App& c, std::optional<std::int64_t>& tokens);

/// A replay or fork about to re-execute a recorded episode's commands.
struct replay_request {
  const transcript_file& recorded;
  std::filesystem::path out_dir;      ///< the new episode's directory
  std::filesystem::path prompts_dir;  ///< the prompt templates in use
  std::optional<bench::device_kind> device;  ///< --device; unset: where it was recorded
};

/// What a replay attached for the recorded commands (a tool server, its leases), held until the
/// replay ends.
class attached_tools {
 public:
  virtual ~attached_tools() = default;
  /// A line saying what was attached, for the user.
  virtual std::string description() const = 0;
};

/// Attaches the tools the recorded episode's commands used (a `pkagent run` episode's pkb) to
/// `opt`'s sandbox; returns null when it used none. Throws std::invalid_argument saying why the
/// commands cannot re-execute here.
using tool_attacher = std::function<std::unique_ptr<attached_tools>(const replay_request&, episode_options& opt)>;

/// Renders the episode of a transcript file as a page (`replay --format html`); the renderer lives
/// above this library (agent/audit), which reads episodes through it.
using page_renderer = std::function<std::string(const std::filesystem::path& transcript)>;

/// Adds the `models`, `episode` and `replay` subcommands to `app`; they set `exit_code` when they
/// run. `attach` gives replays and forks the tools their episodes used; `render_page` renders
/// `replay --format html`.
void add_agent_commands(CLI::App& app, int& exit_code, tool_attacher attach, page_renderer render_page);

}  // namespace pk::agent
