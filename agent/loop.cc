// The agent loop: run() repeats step() = execute(query()) until an end reason is set, and records
// each event as it happens. Parsing, rendering, limits and recording live in their own units.
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "agent/action.h"
#include "agent/episode.h"
#include "agent/host_facts.h"
#include "agent/model_choice.h"
#include "agent/observation.h"
#include "agent/transcript.h"
#include "agent/workspace.h"
#include "pkagent/build_info.h"

namespace pk::agent {
namespace {

using clock = std::chrono::steady_clock;

llm::message text_message(llm::role role, std::string text) {
  llm::message m;
  m.role = role;
  m.text = std::move(text);
  return m;
}

class episode {
 public:
  episode(const task_spec& task, const episode_options& opt, llm::client* live,
          const std::filesystem::path& out)
      : task_(task), opt_(opt), live_(live), workspace_(out / "workspace"),
        log_(out / "transcript.jsonl", secrets_from_environment(), /*fresh=*/true) {
    used_ = opt.used_before;
    used_.steps = used_.input_tokens = used_.output_tokens = 0;
    used_.dollars = 0;
  }

  episode_result run() {
    start_ = clock::now();
    wall_before_ = opt_.used_before.wall_seconds;
    record(header());
    const bool tools = opt_.cfg.action_format == action_format::tools;
    messages_.push_back(text_message(llm::role::system,
                         opt_.prompts.system.render({{"workspace", "/workspace"},
                                                     {"tools_format", tools ? "1" : ""},
                                                     {"text_format", tools ? "" : "1"},
                                                     {"step_limit", std::to_string(opt_.cfg.limits.steps)}})));
    messages_.push_back(text_message(
        llm::role::user, opt_.prompts.task.render({{"task", task_.text}, {"workspace", "/workspace"}})));
    while (!end_) step();
    if (end_->reason == end_reason::submitted && opt_.evaluate) evaluate();
    finish();
    return result_;
  }

 private:
  void step() {
    tick();
    if (auto hit = exceeded(opt_.cfg.limits, used_)) return end(hit->reason, hit->message);
    ++used_.steps;
    if (auto reply = query()) execute(*reply);
  }

  std::optional<llm::response> query() {
    llm::request req;
    req.messages = messages_;
    if (opt_.cfg.action_format == action_format::tools) req.tools = opt_.prompts.tools;
    req.params.seed = opt_.seed;
    record_request(req);
    const bool replayed = next_replay_ < opt_.replay.size();
    llm::response r;
    if (replayed) {
      r = opt_.replay[next_replay_++];
    } else if (!live_) {
      end(end_reason::replay_end, fmt::format("the {} recorded replies ran out", opt_.replay.size()));
      return std::nullopt;
    } else {
      try {
        r = live_->complete(req);
      } catch (const llm::llm_error& e) {
        const limit_hit hit = end_for_model_failure(e);
        end(hit.reason, hit.message);
        return std::nullopt;
      }
    }
    used_.input_tokens += r.tokens.input;
    used_.output_tokens += r.tokens.output;
    used_.dollars += r.cost_usd;
    cached_tokens_ += r.tokens.cached_input;
    action_ = parse_action(r, opt_.cfg.action_format);
    record({{"type", "response"}, {"step", used_.steps}, {"replayed", replayed},
            {"response", to_json(r)}, {"action", to_json(action_)}});
    return r;
  }

  void execute(const llm::response& reply) {
    messages_.push_back(reply.to_message());
    json event = {{"type", "observation"}, {"step", used_.steps}, {"kind", to_string(action_.kind)}};
    std::string text;
    if (action_.kind == action::submit) {
      record(event);
      return end(end_reason::submitted, "the model submitted");
    }
    if (action_.kind == action::invalid) {
      ++used_.consecutive_format_errors;
      text = render_format_error(action_, opt_.prompts);
    } else {
      used_.consecutive_format_errors = 0;
      sandbox::spec spec = opt_.sandbox;
      spec.workspace = workspace_;
      spec.limits.wall = std::chrono::milliseconds(
          static_cast<std::int64_t>(opt_.cfg.limits.command_timeout_seconds * 1000));
      spec.limits.output_bytes = capture_bytes(opt_.cfg);
      sandbox::result r;
      try {
        r = sandbox::run(spec, action_.command);
      } catch (const sandbox::sandbox_error& e) {
        record(event);
        return end(end_reason::sandbox_error, e.what());
      }
      text = render_observation(r, opt_.cfg, opt_.prompts);
      event.update({{"exit_code", r.exit_code}, {"signal", r.signal}, {"timed_out", r.timed_out},
                    {"oom_killed", r.oom_killed}, {"wall_seconds", r.wall_seconds},
                    {"cpu_seconds", r.cpu_seconds}, {"note", r.note},
                    {"stdout", {{"text", r.out.text}, {"bytes", r.out.total_bytes}}},
                    {"stderr", {{"text", r.err.text}, {"bytes", r.err.total_bytes}}}});
    }
    tick();
    for (const limit_warning& w : new_warnings(opt_.cfg.limits, used_, warned_))
      text += "\n" + opt_.prompts.limit_warning.render(
                         {{"limit", w.limit}, {"used", w.used}, {"limit_value", w.limit_value}});
    event["text"] = text;
    record(event);
    // Every tool call needs its answer; a reply without calls gets a user turn.
    if (action_.call_ids.empty()) messages_.push_back(text_message(llm::role::user, text));
    for (const std::string& id : action_.call_ids) {
      llm::message m = text_message(llm::role::tool, text);
      m.tool_call_id = id;
      m.tool_name = action_.kind == action::bash ? "bash" : "";
      m.is_error = action_.kind == action::invalid;
      messages_.push_back(std::move(m));
    }
  }

  void evaluate() {
    evaluation e = opt_.evaluate(workspace_);
    used_.gpu_seconds += e.gpu_seconds;
    result_.eval = e;
    record({{"type", "evaluation"}, {"passed", e.passed}, {"score", e.score},
            {"gpu_seconds", e.gpu_seconds}, {"details", e.details}});
  }

  void end(end_reason reason, std::string message) { end_ = limit_hit{reason, std::move(message)}; }

  void finish() {
    tick();
    result_.reason = end_->reason;
    result_.message = end_->message;
    result_.used = used_;
    result_.transcript = log_.path();
    json totals = to_json(used_);
    totals["cached_input_tokens"] = cached_tokens_;
    record({{"type", "outcome"}, {"reason", to_string(end_->reason)}, {"message", end_->message},
            {"steps", used_.steps},
            {"score", result_.eval ? json(result_.eval->score) : json()},
            {"totals", totals}});
  }

  json header() const {
    return {{"type", "header"},
            {"format", transcript_format},
            {"version", transcript_version},
            {"pkagent", {{"version", build_info::version}, {"commit", build_info::git_commit}}},
            {"model", model_record(opt_.model)},
            {"task", {{"id", task_.id}, {"text", task_.text},
                      {"workspace", std::filesystem::absolute(task_.workspace).string()},
                      {"content_sha256", task_hash(task_.text, task_.workspace)},
                      {"check", task_.check.empty() ? json() : json(std::filesystem::absolute(task_.check).string())}}},
            {"config", to_json(opt_.cfg)},
            {"seed", opt_.seed ? json(*opt_.seed) : json()},
            {"sandbox", {{"isolation", opt_.sandbox.isolation == sandbox::isolation::bwrap ? "bwrap" : "none"},
                         {"gpus", opt_.sandbox.gpus}}},
            {"host", host_facts()},
            {"parent", opt_.parent},
            {"started_at", utc_now()}};
  }

  // Requests are recorded as the messages added since the previous request (append-only).
  void record_request(const llm::request& req) {
    json fresh = json::array();
    for (std::size_t i = recorded_messages_; i < req.messages.size(); ++i)
      fresh.push_back(to_json(req.messages[i]));
    json e = {{"type", "request"}, {"step", used_.steps},
              {"base_step", recorded_messages_ == 0 ? json() : json(used_.steps - 1)},
              {"new_messages", fresh}, {"messages_total", req.messages.size()}};
    if (recorded_messages_ == 0 && !req.tools.empty()) {
      e["tools"] = json::array();
      for (const auto& t : req.tools)
        e["tools"].push_back({{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}});
    }
    recorded_messages_ = req.messages.size();
    record(e);
  }

  void record(json e) {
    e["t"] = std::round((wall_before_ + elapsed()) * 1000) / 1000;
    log_.write(e);
    if (opt_.on_event) opt_.on_event(e);
  }

  double elapsed() const { return std::chrono::duration<double>(clock::now() - start_).count(); }
  void tick() { used_.wall_seconds = wall_before_ + elapsed(); }

  const task_spec& task_;
  const episode_options& opt_;
  llm::client* live_;
  std::filesystem::path workspace_;
  transcript_writer log_;
  std::vector<llm::message> messages_;
  std::size_t recorded_messages_ = 0;
  std::size_t next_replay_ = 0;
  action action_;
  usage_so_far used_;
  std::int64_t cached_tokens_ = 0;
  std::set<std::string> warned_;
  clock::time_point start_;
  double wall_before_ = 0;
  std::optional<limit_hit> end_;
  episode_result result_;
};

}  // namespace

episode_result run_episode(const task_spec& task, const episode_options& opt, llm::client* live,
                           const std::filesystem::path& out_dir) {
  return episode(task, opt, live, out_dir).run();
}

}  // namespace pk::agent
