#include "agent/cli.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "agent/check.h"
#include "agent/episode_dir.h"
#include "agent/model_choice.h"
#include "agent/replay.h"
#include "bench/device_option.h"
#include "config/paths.h"
#include "config/read_file.h"
#include "config/toml_reader.h"
#include "sandbox/cli.h"

namespace pk::agent {
namespace fs = std::filesystem;
namespace {

fs::path or_default(const fs::path& given, const char* data_file) {
  return given.empty() ? config::data_path(data_file) : given;
}

// The flags of `episode` and of the live part of `replay --from-step`, bound in place.
struct agent_args {
  fs::path config_file, prompts_dir, models_file;
  std::vector<std::string> overrides;
  sandbox::spec sandbox;  // --sandbox, --gpus
  std::optional<std::int64_t> max_output_tokens;
  bool quiet = false;

  void add(CLI::App* c) {
    add_shared_options(*c, {config_file, overrides, prompts_dir, models_file, sandbox.isolation, quiet});
    c->add_option("--gpus", sandbox.gpus, "Host GPU indices the episode may use (default: none)")->delimiter(',');
    add_max_output_tokens_option(*c, max_output_tokens);
  }
  chosen_model choose(const std::string& name) const { return choose_model(name, models(), max_output_tokens); }
  fs::path models() const { return or_default(models_file, "config/models.toml"); }

  episode_options options(agent_config cfg) const {
    apply_overrides(cfg, overrides);
    episode_options o;
    o.cfg = cfg;
    o.prompts = prompt_set::load(or_default(prompts_dir, "prompts"));
    o.sandbox = sandbox;
    if (!quiet) o.on_event = progress_printer();
    return o;
  }
  agent_config base_config() const { return load_agent_config(or_default(config_file, "config/agent.toml")); }

  // Progress lines on stderr. The header says whether the model has prices: without them the
  // spend is unknown, which $0 would misstate as free.
  static std::function<void(const json&)> progress_printer() {
    return [prices_known = true](const json& e) mutable {
      if (e["type"] == "header")
        prices_known = e["model"].value("prices_usd_per_mtok", json::object()).value("known", true);
      print_progress(e, prices_known);
    };
  }

  static void print_progress(const json& e, bool prices_known) {
    const std::string type = e["type"];
    if (type == "response") {
      const json& a = e["action"];
      std::string what = a["kind"] == "bash" ? std::string(a.value("command", "")) : a["kind"].get<std::string>();
      auto nl = what.find('\n');
      if (nl != std::string::npos) what = what.substr(0, nl) + " ...";
      fmt::print(stderr, "step {:>3}{} {}{}\n", e["step"].get<int>(), e.value("replayed", false) ? " (replayed)" : "",
                 what.size() > 100 ? what.substr(0, 97) + "..." : what,
                 e["response"].value("finish", "") == "length" ? " (reply cut at the output token limit)" : "");
    } else if (type == "observation" && e.contains("exit_code")) {
      fmt::print(stderr, "         -> exit {}{} ({:.2f} s)\n", e["exit_code"].get<int>(),
                 e.value("timed_out", false) ? ", timed out" : "", e.value("wall_seconds", 0.0));
    } else if (type == "evaluation") {
      fmt::print(stderr, "evaluation: {} (score {})\n", e.value("passed", false) ? "passed" : "failed",
                 e["score"].dump());
    } else if (type == "outcome") {
      const json& x = e["totals"];
      fmt::print(stderr, "outcome: {} ({}) after {} steps, {} in / {} out tokens, {}, {:.1f} s\n",
                 e["reason"].get<std::string>(), e["message"].get<std::string>(), e["steps"].get<int>(),
                 x["input_tokens"].get<long>(), x["output_tokens"].get<long>(),
                 prices_known ? fmt::format("${:.4f}", x["dollars"].get<double>()) : std::string("$ unknown"),
                 x["wall_seconds"].get<double>());
    }
  }
};

void add_evaluator(episode_options& o, const task_spec& task) {
  if (!task.check.empty())
    o.evaluate = check_script_evaluator(task.check, o.sandbox, o.cfg.limits.command_timeout_seconds);
}

int exit_code_for(const episode_result& r) {
  fmt::print("{}\n", r.transcript.string());
  return r.reason == end_reason::submitted ? 0 : 1;
}

void add_episode(CLI::App& app, int& exit_code) {
  struct args : agent_args {
    std::string workspace, task, task_file, check, id, model, out;
    std::optional<std::int64_t> seed;
  };
  auto a = std::make_shared<args>();
  CLI::App* c = app.add_subcommand("episode", "Run one agent episode on a workspace and a task, or resume "
                                              "the unfinished one in --out");
  c->footer("Exit status: 0 when the model submitted, 1 when a limit or a model error ended the episode, "
            "2 on bad input. The transcript path is printed on stdout. Running again on the same --out "
            "resumes an episode that crashed or ended by a model error.\n"
            "Example: pkagent episode --workspace prompts/demo/workspace --task-file prompts/demo/task.md "
            "--model demo --out /tmp/ep");
  c->add_option("--out", a->out, "Episode directory (transcript.jsonl, workspace/); an unfinished "
                                 "one is resumed")->required();
  c->add_option("--workspace", a->workspace, "Directory the model starts from (copied, never changed)");
  c->add_option("--task", a->task, "Task text");
  c->add_option("--task-file", a->task_file, "File holding the task text");
  c->add_option("--check", a->check, "Script run on the submitted workspace; exit 0 scores 1");
  c->add_option("--id", a->id, "Task id for the transcript (default: the workspace's name)");
  add_model_option(*c, a->model, "The model that acts");
  c->add_option("--seed", a->seed, "Sampling seed sent to the model (where supported)");
  a->add(c);
  c->callback([a, &exit_code] {
    if (auto existing = latest_transcript(a->out)) {
      transcript_file old = read_transcript(*existing);
      if (old.header.is_null())
        throw std::invalid_argument(fmt::format("{}: has no readable header, so it cannot be resumed",
                                                existing->string()));
      // An episode cut short by the provider (outage, retries exhausted) may be continued.
      if (old.finished() && old.outcome.value("reason", "") != to_string(end_reason::model_error))
        throw std::invalid_argument(fmt::format("{}: this episode already finished ({}); choose another --out",
                                                a->out, old.outcome.value("reason", "?")));
      const json& recorded = old.header["model"];
      std::string model = recorded["name"];
      if (!a->model.empty() && llm::model_identity(a->model) != model)
        throw std::invalid_argument(fmt::format("{}: the episode was started with model {}, not {}; "
                                                "use replay --from-step to continue with another model",
                                                a->out, model, a->model));
      // An openai-compatible model is recorded without its port: reconnect where it was, unless
      // --model says where the server is now.
      if (!a->model.empty())
        model = a->model;
      else if (model.starts_with("openai-compatible:"))
        model = fmt::format("openai-compatible:{}#{}", recorded.value("base_url", ""), recorded.value("model", ""));
      task_spec task = task_from_header(old.header);
      episode_options o = a->options(agent_config_from_json(old.header["config"]));
      if (!old.header["seed"].is_null()) o.seed = old.header["seed"].get<std::int64_t>();
      add_evaluator(o, task);
      chosen_model m = a->choose(model);
      o.model = m.config;
      fmt::print(stderr, "resuming {}: {} complete steps recorded\n", existing->string(), old.complete_steps());
      exit_code = exit_code_for(resume_episode(old, task, o, m.client.get(), a->out));
      return;
    }
    if (a->workspace.empty() || a->model.empty() || (a->task.empty() == a->task_file.empty()))
      throw CLI::ValidationError("a new episode needs --workspace, --model and exactly one of "
                                            "--task or --task-file");
    task_spec task{a->id.empty() ? fs::absolute(a->workspace).filename().string() : a->id,
                   a->task_file.empty() ? a->task : read_file(a->task_file, "the task file"),
                   fs::absolute(a->workspace), a->check.empty() ? fs::path() : fs::absolute(a->check)};
    episode_options o = a->options(a->base_config());
    o.seed = a->seed;
    add_evaluator(o, task);
    chosen_model m = a->choose(a->model);
    o.model = m.config;
    exit_code = exit_code_for(start_episode(task, o, m.client.get(), a->out));
  });
}

struct replay_args : agent_args {
  std::string transcript, format = "md", model, out, workspace;
  std::optional<bench::device_kind> device;
  bool no_exec = false;
  int from_step = -1;
};

// The transcript `given` names: the file itself, or the latest of an episode directory.
fs::path transcript_named(const fs::path& given) {
  if (!fs::is_directory(given)) return given;
  auto t = latest_transcript(given);
  if (!t) throw std::invalid_argument(fmt::format("{}: holds no transcript", given.string()));
  return *t;
}

// The default directory of a replay is temporary: removed however the replay ends.
struct removed_at_exit {
  std::string dir;
  ~removed_at_exit() {
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  }
};

// Prints how each step of the re-executed episode `now` compares with the recorded `then`, and
// both outcomes. Returns the exit status: 0 when no step differs.
int report_replay(const transcript_file& then, const transcript_file& now, bool run_episode) {
  int differing = 0;
  for (const step_match& m : compare_observations(then, now)) {
    fmt::print("step {:>3}: {}{}\n", m.step, to_string(m.result), m.detail.empty() ? "" : "  " + m.detail);
    differing += m.result == step_match::differs || m.result == step_match::missing;
  }
  // A run episode's verdict comes from its final scoring, which a replay does not repeat.
  fmt::print("outcome then: {}, {}\noutcome now:  {}, {}\n",
             then.finished() ? then.outcome.value("reason", "?") : "unfinished",
             verdict_text(then).value_or("no verdict (nothing scored it)"), now.outcome.value("reason", "?"),
             verdict_text(now).value_or(run_episode ? "not scored again (`pkagent run` scores an episode on hidden inputs)"
                                              : "no verdict (nothing scored it)"));
  return differing == 0 ? 0 : 1;
}

// `pkagent replay` once its options are read: renders the transcript, forks it, or re-executes
// its steps and compares. Returns the exit status.
int replay(const replay_args& a, const tool_attacher& attach, const page_renderer& render_page) {
  const fs::path file = transcript_named(a.transcript);
  transcript_file t = read_transcript(file);
  for (const auto& p : t.problems)
    fmt::print(stderr, "{}:{}: {}\n", file.string(), p.line, p.reason);
  if (a.format == "html") {
    fmt::print("{}", render_page(file));
    return t.problems.empty() ? 0 : 1;
  }
  if (a.no_exec) {
    fmt::print("{}", render_transcript(t, a.format));
    return t.problems.empty() ? 0 : 1;
  }
  if (t.header.is_null())
    throw std::invalid_argument(fmt::format("{}: has no readable header; only --no-exec can show it", file.string()));
  task_spec task = task_from_header(t.header);
  if (!a.workspace.empty()) task.workspace = fs::absolute(a.workspace);
  episode_options o = a.options(agent_config_from_json(t.header["config"]));
  add_evaluator(o, task);
  const bool fork = a.from_step >= 0;
  if (fork && (a.model.empty() || a.out.empty()))
    throw CLI::ValidationError("--from-step needs --model NAME and --out DIR");
  fs::path out = a.out;
  removed_at_exit tmp;
  if (out.empty()) {
    tmp.dir = (fs::temp_directory_path() / "pkagent-replay-XXXXXX").string();
    if (!mkdtemp(tmp.dir.data())) throw std::runtime_error("cannot create a temporary directory");
    out = fs::path(tmp.dir) / "run";
  }
  // The commands re-execute against what they used when recorded (a run episode's pkb tool).
  std::unique_ptr<attached_tools> tools;
  if (attach) tools = attach({t, out, or_default(a.prompts_dir, "prompts"), a.device}, o);
  if (!tools && a.device)
    throw std::invalid_argument(fmt::format("--device applies to episodes of `pkagent run`, whose commands used "
                                            "the pkb tool; {} used none", file.string()));
  if (tools && !a.quiet) fmt::print(stderr, "{}\n", tools->description());
  if (fork) {
    chosen_model m = a.choose(a.model);
    o.model = m.config;
    return exit_code_for(replay_episode(t, a.from_step, task, o, m.client.get(), out));
  }
  llm::model_config recorded;
  recorded.name = t.header["model"].value("name", "?") + " (replayed)";
  recorded.model = "replay";
  o.model = recorded;
  episode_result r = replay_episode(t, t.complete_steps(), task, o, nullptr, out);
  const bool run_episode = tools != nullptr;
  tools.reset();  // its server and leases end with the replay
  const int status = report_replay(t, read_transcript(r.transcript), run_episode);
  if (tmp.dir.empty()) fmt::print("new transcript: {}\n", r.transcript.string());
  return status;
}

void add_replay(CLI::App& app, int& exit_code, const tool_attacher& attach, const page_renderer& render_page) {
  auto a = std::make_shared<replay_args>();
  CLI::App* c = app.add_subcommand("replay", "Replay a transcript: re-execute its actions and compare, "
                                             "render it, or fork it with another model");
  c->footer("Default: the recorded replies are played (no network), every action re-runs in a fresh "
            "sandbox, and each step is reported as identical, differing only in measured figures (times, "
            "speedups, percentages, GPU ids), or differing; exit 1 when any step differs.\n"
            "An episode of `pkagent run` gets its pkb tool back, for the same problem, with GPU leases (or "
            "--device cpu).\n"
            "--no-exec renders instead (exit 1 when lines could not be read; the rest is shown).\n"
            "--from-step K --model NAME --out DIR keeps steps 1..K and continues live with NAME.");
  c->add_option("transcript", a->transcript, "transcript.jsonl (or its episode directory)")->required()
      ->check(CLI::ExistingPath);
  c->add_flag("--no-exec", a->no_exec, "Render the recorded conversation and outcome; run nothing");
  c->add_option("--format", a->format,
                "Rendering for --no-exec: md (default) or text; html renders one static page (the episode's "
                "steps, outputs, pkb reports, solution diffs and verdict) and implies --no-exec")
      ->check(CLI::IsMember({"md", "text", "html"}));
  c->add_option("--from-step", a->from_step, "Fork: keep steps 1..K, then continue live with --model");
  add_model_option(*c, a->model, "The model that continues a fork");
  c->add_option("--out", a->out, "Directory for the new run (fork: required; replay: default a temporary one)");
  c->add_option("--workspace", a->workspace, "The task's workspace, if it moved since recording");
  bench::add_device_option(*c, a->device, "An episode of `pkagent run`: where its pkb commands run, cuda (GPU "
                                          "leases) or cpu (gloo); default: where the run ran");
  a->add(c);
  c->callback([a, &exit_code, attach, render_page] { exit_code = replay(*a, attach, render_page); });
}

void add_models(CLI::App& app, int& exit_code) {
  auto file = std::make_shared<fs::path>();
  CLI::App* cmd = app.add_subcommand(
      "models", "List the models --model accepts: the scripted demo and the entries of config/models.toml, "
                "with provider, model id, price and whether the key is set");
  cmd->add_option("--models", *file, "Model table (default: config/models.toml)");
  cmd->callback([file, &exit_code] {
    const auto models = llm::load_models(or_default(*file, "config/models.toml"));
    constexpr std::string_view row = "{:<30} {:<17} {:<34} {:>14}  {}\n";
    fmt::print(row, "NAME", "PROVIDER", "MODEL", "USD/M in/out", "KEY");
    fmt::print(row, "demo", "scripted", "prompts/demo/replies.md", "free", "none needed");
    for (const auto& m : models) {
      std::string key = "none needed";
      if (!m.api_key_env.empty()) {
        const char* v = std::getenv(m.api_key_env.c_str());
        const bool set = v != nullptr && *v != '\0';
        key = fmt::format("{} {}{}", m.api_key_env, set ? "set" : "NOT SET", m.key_optional ? " (optional)" : "");
      }
      const std::string price =
          m.price.known ? fmt::format("{:g}/{:g}", m.price.input, m.price.output) : std::string("unknown");
      fmt::print(row, m.name, llm::to_string(m.provider), m.model, price, key);
    }
    fmt::print("\nAlso: --model demo:FILE plays the replies of FILE; --model openai-compatible:URL#MODEL uses any "
               "OpenAI-compatible server (key: OPENAI_API_KEY if set; docs/models.md).\n");
    exit_code = 0;
  });
}

}  // namespace

void add_shared_options(CLI::App& c, const shared_options& to) {
  c.add_option("--config", to.config, "Agent settings (default: config/agent.toml)");
  c.add_option("--set", to.overrides, "Override one agent setting, e.g. --set limits.steps=20 "
                                      "--set action.format=text (repeatable)");
  c.add_option("--prompts", to.prompts, "Prompt templates directory (default: prompts/)");
  c.add_option("--models", to.models, "Model table (default: config/models.toml)");
  sandbox::add_isolation_option(c, to.isolation, "bwrap (default) or none (no isolation: for debugging only)");
  c.add_flag("-q,--quiet", to.quiet, "No progress output");
}

CLI::Option* add_model_option(CLI::App& c, std::string& model, const std::string& role) {
  return c.add_option("--model", model, role + ": a name from config/models.toml (pkagent models), demo[:SCRIPT] "
                                               "(scripted replies, no key), or openai-compatible:URL#MODEL for any "
                                               "OpenAI-compatible server (docs/models.md)");
}

CLI::Option* add_max_output_tokens_option(CLI::App& c, std::optional<std::int64_t>& tokens) {
  return c.add_option("--max-output-tokens", tokens, "Output tokens per model reply (default: the model's; "
                      "openai-compatible: " + std::to_string(llm::compatible_max_output_tokens) + ")")
      ->check(CLI::PositiveNumber);
}

void add_agent_commands(CLI::App& app, int& exit_code, tool_attacher attach, page_renderer render_page) {
  add_models(app, exit_code);
  add_episode(app, exit_code);
  add_replay(app, exit_code, attach, render_page);
}

}  // namespace pk::agent
