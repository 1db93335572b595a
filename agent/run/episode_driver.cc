#include "agent/run/episode_driver.h"

#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "agent/episode_dir.h"
#include "agent/prompt_template.h"
#include "agent/run/pkb_binding.h"
#include "agent/run/pkb_tool/server.h"
#include "agent/run/zero_shot.h"
#include "bench/eval/eval_report.h"
#include "bench/eval/evaluate.h"
#include "bench/metrics/results_file.h"

namespace pk::run {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

void write_json_atomically(const fs::path& file, const json& j) {
  const fs::path tmp = file.string() + ".partial";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
    if (!out.flush()) throw std::runtime_error(fmt::format("{}: cannot write", tmp.string()));
  }
  fs::rename(tmp, file);
}

// What a finished transcript says the episode used (the crash came between its end and the scoring).
void take_outcome(const agent::transcript_file& t, episode_facts& facts) {
  const agent::outcome_event o = agent::event_as<agent::outcome_event>(t.outcome);
  facts.end_reason = std::string(agent::to_string(o.reason));
  facts.used = o.used;
}

// The result records: result.json beside the transcript, then a line of the run's results file.
metrics::episode_result record(const run_options& o, const fs::path& ep, metrics::episode_result res) {
  write_json_atomically(ep / "result.json", metrics::to_json(res));
  metrics::append_result(results_file(o), res);
  return res;
}

}  // namespace

episode_driver::episode_driver(const run_setup& setup, scheduler::gpu_scheduler& gpus, progress& prog,
                               event_observer on_event)
    : setup_(setup), gpus_(gpus), prog_(prog), on_event_(std::move(on_event)) {}

metrics::episode_result episode_driver::run(const bench::problem& problem, int sample) {
  const fs::path ep = episode_dir(setup_.o.out, problem, sample);
  const std::string name = fmt::format("{}/sample-{}", problem.name(), sample);
  fs::create_directories(ep);
  prog_.started(name);
  const scheduler::holder who = gpus_.add_holder(setup_.run_id + "/" + name, setup_.o.gpu_seconds_cap);
  episode_facts facts;
  facts.run_id = setup_.run_id;
  facts.mode = setup_.o.mode;
  facts.model = setup_.model.name;
  facts.prices_known = setup_.demo || setup_.model.price.known;
  facts.sample = sample;
  facts.transcript = fs::relative(ep / "transcript.jsonl", setup_.o.out).string();
  try {
    if (setup_.o.mode == metrics::run_mode::agent) play_agent(problem, ep, name, who, facts);
    else play_zeroshot(problem, ep, name, facts);
    const metrics::episode_result res = score(problem, ep, name, who, facts);
    prog_.finished(name, {res.verdict, res.correct, faster_beyond_noise(res), res.speedup, res.end_reason,
                          facts.used.steps, res.tokens_in + res.tokens_out, res.dollars});
    return res;
  } catch (...) {
    prog_.finished(name, {"error", false, false, std::nullopt, "harness_error", facts.used.steps,
                          facts.used.input_tokens + facts.used.output_tokens, facts.used.dollars});
    throw;
  }
}

void episode_driver::play_agent(const bench::problem& problem, const fs::path& ep, const std::string& name,
                                scheduler::holder who, episode_facts& facts) {
  std::optional<agent::transcript_file> old;
  if (auto existing = agent::latest_transcript(ep)) old = agent::read_transcript(*existing);
  if (old && old->finished()) return take_outcome(*old, facts);

  episode_model model = model_for(setup_, problem);
  pkb::server srv(tool_context(setup_, problem, ep, gpus_, who), ep / "pkb");
  bench::warm_sets(base_eval(setup_));

  agent::episode_options opt;
  opt.cfg = setup_.cfg;
  opt.prompts = setup_.prompts;
  opt.model = model.config;
  opt.sandbox.isolation = setup_.o.isolation;
  opt.sandbox.hidden = hidden_from_episodes(setup_);
  attach_pkb(opt.sandbox, srv, setup_.pkb_binary);
  opt.tools = tool_record(setup_, problem);
  // A step's line is shown once its observation is written: the reply, then what its action did.
  step_report step;
  opt.on_event = [this, &name, &step](const json& e) {
    const std::string type = e.value("type", "");
    if (type == "response") {
      const agent::response_event r = agent::event_as<agent::response_event>(e);
      prog_.spent(name, r.response.tokens.input + r.response.tokens.output, r.response.cost_usd);
      step = step_report{};
      step.step = r.step;
      step.replayed = r.replayed;
      step.action = r.parsed_action ? agent::to_string(r.parsed_action->kind) : "invalid";
      step.command = r.parsed_action ? r.parsed_action->command : "";
      step.cut = r.response.finish == llm::finish_reason::length;
    } else if (type == "observation") {
      const agent::observation_event o = agent::event_as<agent::observation_event>(e);
      if (o.command) {
        step.exit_code = o.command->exit_code;
        step.timed_out = o.command->timed_out;
        step.wall_seconds = o.command->wall_seconds;
      }
      prog_.step(name, step);
    }
    if (on_event_) on_event_(name, e);
  };

  agent::episode_result er;
  if (old && !old->header.is_null()) {
    opt.cfg = agent::agent_config_from_json(old->header["config"]);
    prog_.note(fmt::format("resuming {}: {} complete steps recorded", name, old->complete_steps()));
    er = agent::resume_episode(*old, agent::task_from_header(old->header), std::move(opt), model.client, ep);
  } else {
    if (old) fs::remove(old->path);  // a transcript with no readable header holds nothing to resume
    const agent::task_spec task{problem.name(), setup_.task_text.at(problem.id), setup_.task_dir.at(problem.id), {}};
    er = agent::start_episode(task, std::move(opt), model.client, ep);
  }
  facts.end_reason = std::string(agent::to_string(er.reason));
  facts.used = er.used;
}

void episode_driver::play_zeroshot(const bench::problem& problem, const fs::path& ep, const std::string& name,
                                   episode_facts& facts) {
  const episode_model model = model_for(setup_, problem);
  const auto system = agent::prompt_template::load(setup_.prompts_dir / "problem" / "zeroshot_system.md", {});
  const auto user = agent::prompt_template::load(setup_.prompts_dir / "problem" / "zeroshot.md", {"problem"});
  const zero_shot_outcome z = run_zero_shot(*model.client, model.config, problem.name(), system.render({}),
                                            user.render({{"problem", setup_.task_text.at(problem.id)}}), ep);
  prog_.spent(name, z.used.input_tokens + z.used.output_tokens, z.used.dollars);
  facts.end_reason = std::string(agent::to_string(z.reason));
  facts.used = z.used;
}

metrics::episode_result episode_driver::score(const bench::problem& problem, const fs::path& ep,
                                              const std::string& name, scheduler::holder who, episode_facts& facts) {
  // Nothing to judge (no solution.py, the stub as it was, a reply without code): no_submission,
  // and no final_eval.json, since the judge never saw it.
  const fs::path stub = setup_.o.mode == metrics::run_mode::agent ? setup_.task_dir.at(problem.id) / "solution.py"
                                                                   : fs::path();
  if (const auto why = nothing_submitted(ep / "workspace" / "solution.py", stub)) {
    prog_.note(fmt::format("{}: {}: nothing to judge", name, *why));
    facts.gpu_seconds = gpus_.usage_of(who).gpu_seconds;
    return record(setup_.o, ep, unjudged_result(problem, setup_.o.world, setup_.o.device, facts));
  }
  bench::eval_options e = base_eval(setup_);
  e.trials = setup_.o.final_trials;
  e.perf = setup_.o.final_perf;
  e.secret_seeds = true;  // final scoring: inputs nobody can know in advance
  // Final scoring is charged to an uncapped holder of its own, so that an episode that spent its
  // budget is still scored and the lease log names the episode it scored.
  const scheduler::holder scoring = gpus_.add_holder(setup_.run_id + "/" + name + "/final");
  const bench::eval_report report = score_solution(problem, ep / "workspace" / "solution.py", e, gpus_, scoring);
  write_json_atomically(ep / "final_eval.json", bench::to_json(report));
  facts.gpu_seconds = gpus_.usage_of(who).gpu_seconds + gpus_.usage_of(scoring).gpu_seconds;
  return record(setup_.o, ep, make_result(problem, report, facts));
}

}  // namespace pk::run
