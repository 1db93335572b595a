// The agent loop: run() repeats step() = execute(query()) until an end reason is set, and records
// each event as it happens. Parsing, rendering, limits and recording live in their own units.
#include <chrono>

#include <fmt/format.h>

#include "agent/action.h"
#include "agent/episode.h"
#include "agent/host_summary.h"
#include "agent/model_choice.h"
#include "agent/observation.h"
#include "agent/transcript.h"
#include "agent/workspace.h"

namespace pk::agent {
namespace {

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
        log_(out / "transcript.jsonl", secrets_from_environment(), /*fresh=*/true, opt.used_before.wall_seconds) {
    used_ = opt.used_before;
    used_.steps = used_.input_tokens = used_.output_tokens = 0;
    used_.dollars = 0;
    log_.observe(opt.on_event);
  }

  episode_result run() {
    log_.write(header());
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
  /// The number of the step under way (steps count from 1).
  int step_number() const { return static_cast<int>(used_.steps); }

  void step() {
    tick();
    const std::optional<limit_hit> hit = exceeded(opt_.cfg.limits, used_);
    // The last observation goes out with the warnings of the step it leads to: a limit's warning
    // is read with the prompt of that step, and an observation no step follows carries none.
    if (pending_) deliver(hit ? std::vector<limit_warning>{} : new_warnings(opt_.cfg.limits, used_, warned_));
    if (hit) return end(hit->reason, hit->message);
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
    log_.write(response_event{step_number(), replayed, r, action_});
    return r;
  }

  void execute(const llm::response& reply) {
    messages_.push_back(reply.to_message());
    observation_event seen{step_number(), action_.kind, std::nullopt, std::nullopt};
    std::string text;
    if (action_.kind == action::submit) {
      log_.write(seen);
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
      sandbox::result ran;
      try {
        ran = sandbox::run(spec, action_.command);
      } catch (const sandbox::sandbox_error& e) {
        log_.write(seen);
        return end(end_reason::sandbox_error, e.what());
      }
      text = render_observation(ran, opt_.cfg, opt_.prompts);
      seen.command = record_of(ran);
    }
    seen.text = std::move(text);
    pending_ = pending_observation{std::move(seen), action_};
  }

  /// Writes the pending observation with `warnings` added, and adds it to the conversation.
  void deliver(const std::vector<limit_warning>& warnings) {
    observation_event seen = std::move(pending_->event);
    const action done = std::move(pending_->done);
    pending_.reset();
    std::string& text = *seen.text;
    for (const limit_warning& w : warnings)
      text += "\n" + opt_.prompts.limit_warning.render({{"limit", w.limit}, {"used", w.used},
                                                        {"limit_value", w.limit_value}, {"next_step", w.next_step}});
    log_.write(seen);
    // Every tool call needs its answer; a reply without calls gets a user turn.
    if (done.call_ids.empty()) messages_.push_back(text_message(llm::role::user, text));
    for (const std::string& id : done.call_ids) {
      llm::message m = text_message(llm::role::tool, text);
      m.tool_call_id = id;
      m.tool_name = done.kind == action::bash ? "bash" : "";
      m.is_error = done.kind == action::invalid;
      messages_.push_back(std::move(m));
    }
  }

  void evaluate() {
    evaluation e = opt_.evaluate(workspace_);
    used_.gpu_seconds += e.gpu_seconds;
    result_.eval = e;
    log_.write(evaluation_event{e.passed, e.score, e.gpu_seconds, e.details});
  }

  void end(end_reason reason, std::string message) { end_ = limit_hit{reason, std::move(message)}; }

  void finish() {
    tick();
    result_.reason = end_->reason;
    result_.message = end_->message;
    result_.used = used_;
    result_.transcript = log_.path();
    log_.write(outcome_event{end_->reason, end_->message,
                             result_.eval ? std::optional(result_.eval->score) : std::nullopt, used_,
                             cached_tokens_});
  }

  header_event header() const {
    header_event h;
    h.pkagent = this_build();
    h.model = model_record(opt_.model);
    h.task = {task_.id, task_.text,
              task_origin{std::filesystem::absolute(task_.workspace).string(),
                          task_hash(task_.text, task_.workspace),
                          task_.check.empty() ? std::nullopt
                                              : std::optional(std::filesystem::absolute(task_.check).string())}};
    h.setup = episode_setup{opt_.cfg, opt_.seed, opt_.sandbox.isolation, opt_.sandbox.gpus, opt_.parent, opt_.tools};
    h.host = host_summary();
    h.started_at = utc_now();
    return h;
  }

  // Requests are recorded as the messages added since the previous request (append-only).
  void record_request(const llm::request& req) {
    request_event e;
    e.step = step_number();
    if (recorded_messages_ > 0) e.base_step = step_number() - 1;
    e.new_messages.assign(req.messages.begin() + static_cast<std::ptrdiff_t>(recorded_messages_), req.messages.end());
    e.messages_total = req.messages.size();
    if (recorded_messages_ == 0) e.tools = req.tools;
    recorded_messages_ = req.messages.size();
    log_.write(e);
  }

  void tick() { used_.wall_seconds = log_.seconds(); }

  const task_spec& task_;
  const episode_options& opt_;
  llm::client* live_;
  std::filesystem::path workspace_;
  transcript_writer log_;
  std::vector<llm::message> messages_;
  std::size_t recorded_messages_ = 0;
  std::size_t next_replay_ = 0;
  action action_;
  /// The last step's observation, written once the next step is known to happen or not.
  struct pending_observation {
    observation_event event;
    action done;
  };
  std::optional<pending_observation> pending_;
  usage_so_far used_;
  std::int64_t cached_tokens_ = 0;
  std::set<std::string> warned_;
  std::optional<limit_hit> end_;
  episode_result result_;
};

}  // namespace

episode_result run_episode(const task_spec& task, const episode_options& opt, llm::client* live,
                           const std::filesystem::path& out_dir) {
  return episode(task, opt, live, out_dir).run();
}

}  // namespace pk::agent
