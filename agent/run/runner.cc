#include "agent/run/runner.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "agent/episode_dir.h"
#include "agent/model_choice.h"
#include "agent/prompts.h"
#include "agent/scripted_client.h"
#include "agent/run/final_score.h"
#include "agent/run/pkb_binding.h"
#include "agent/run/problem_task.h"
#include "agent/run/progress.h"
#include "agent/run/zero_shot.h"
#include "bench/eval/hardware_spec.h"
#include "bench/eval/reference_cache.h"
#include "bench/eval/report.h"
#include "bench/metrics/results_file.h"
#include "agent/run/pkb_tool/python_env.h"
#include "agent/run/pkb_tool/server.h"
#include "config/paths.h"

namespace pk::run {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

fs::path or_default(const fs::path& given, const char* data_relative) {
  return given.empty() ? config::data_path(data_relative) : given;
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read", file.string()));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_json_atomically(const fs::path& file, const json& j) {
  const fs::path tmp = file.string() + ".partial";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
    if (!out.flush()) throw std::runtime_error(fmt::format("{}: cannot write", tmp.string()));
  }
  fs::rename(tmp, file);
}

// OUT/leases.jsonl: every lease of the run (pkb commands and final scoring), one line each, so
// that a run shows by itself that no two leases of a GPU overlapped. Appended across reruns.
class lease_log {
 public:
  lease_log(scheduler::gpu_scheduler& gpus, const fs::path& file) : gpus_(gpus), out_(file, std::ios::app) {
    if (!out_) throw std::runtime_error(fmt::format("{}: cannot write", file.string()));
    gpus_.on_lease_end([this](const scheduler::lease_record& r) {
      const json line = {{"holder", r.holder}, {"gpus", r.gpus}, {"start", r.start_s}, {"end", r.end_s}};
      std::lock_guard lock(mu_);
      out_ << line.dump(-1, ' ', false, json::error_handler_t::replace) << '\n' << std::flush;
    });
  }
  ~lease_log() { gpus_.on_lease_end(nullptr); }  // every lease of the run has ended by now
  lease_log(const lease_log&) = delete;
  lease_log& operator=(const lease_log&) = delete;

 private:
  scheduler::gpu_scheduler& gpus_;
  std::mutex mu_;
  std::ofstream out_;
};

// Everything the episodes of one run share, prepared once before the first starts.
struct run_context {
  run_options o;
  std::string run_id;
  std::vector<bench::problem> problems;  // the selected ones, by id
  bench::hardware_spec hw;
  fs::path prompts_dir;
  agent::agent_config cfg;
  agent::prompt_set prompts;
  std::map<int, std::string> task_text;  // PROBLEM.md per problem id
  std::map<int, fs::path> task_dir;
  llm::model_config model;
  std::unique_ptr<llm::client> client;   // shared by every episode (null for the demo model)
  fs::path pkb_binary;
  bool demo = false;
};

// What an episode's commands must not read: pkagent's own tree (problems, inputs, the worker), the
// run directory (other episodes, their results) and the judge's caches. What an episode needs
// from them (its workspace, the pkb socket and client) is bound back in.
std::vector<fs::path> hidden_from_episodes(const run_context& rc) {
  return {config::home(), fs::absolute(rc.o.out), bench::reference_cache::default_root().parent_path()};
}

bench::eval_options base_eval(const run_context& rc) {
  bench::eval_options e;
  e.world = rc.o.world;
  e.device = rc.o.device;
  e.isolation = rc.o.isolation;
  e.hardware = rc.hw;
  if (rc.o.device == "cpu") e.timing.warmup_max_ms = 1000;
  return e;
}

// The demo model plays prompts/problem/demo/: the agent script, or for zero-shot a reply
// holding the problem's own reference (a known-correct implementation).
agent::chosen_model demo_model(const run_context& rc, const bench::problem& p) {
  agent::chosen_model m;
  fs::path script = rc.prompts_dir / "problem" / "demo" /
                    (rc.o.mode == metrics::run_mode::agent ? "agent.md" : "zeroshot.md");
  if (rc.o.mode == metrics::run_mode::agent) {
    m.client = std::make_unique<agent::scripted_client>(agent::scripted_client::from_file(script));
  } else {
    const auto tpl = agent::prompt_template::load(script, {"reference"});
    std::string ref = read_text(p.reference);
    while (!ref.empty() && ref.back() == '\n') ref.pop_back();
    m.client = std::make_unique<agent::scripted_client>(std::vector<std::string>{tpl.render({{"reference", ref}})});
  }
  m.config.name = "demo";
  m.config.model = "scripted";
  m.config.base_url = "file://" + fs::absolute(script).string();
  return m;
}

class run_driver {
 public:
  run_driver(run_context& rc, scheduler::gpu_scheduler& gpus, progress& prog,
             const std::function<void(const std::string&, const json&)>& on_event)
      : rc_(rc), gpus_(gpus), prog_(prog), on_event_(on_event) {}

  // Returns true when the episode was scored now.
  bool run_one(const bench::problem& p, int sample) {
    const fs::path ep = episode_dir(rc_.o.out, p, sample);
    const std::string name = fmt::format("{}/sample-{}", p.name(), sample);
    fs::create_directories(ep);
    prog_.started(name);
    const scheduler::holder who = gpus_.add_holder(rc_.run_id + "/" + name, rc_.o.gpu_seconds_cap);
    episode_facts f;
    f.run_id = rc_.run_id;
    f.mode = rc_.o.mode;
    f.model = rc_.model.name;
    f.prices_known = rc_.demo || rc_.model.price.known;
    f.sample = sample;
    f.transcript = fs::relative(ep / "transcript.jsonl", rc_.o.out).string();
    try {
      if (rc_.o.mode == metrics::run_mode::agent) run_agent(p, ep, name, who, f);
      else run_zeroshot(p, ep, f);

      bench::eval_options e = base_eval(rc_);
      e.trials = rc_.o.final_trials;
      e.perf = rc_.o.final_perf;
      e.secret_seeds = true;  // final scoring: inputs nobody can know in advance
      // Final scoring is charged to an uncapped holder of its own, so that an episode that spent
      // its budget is still scored and the lease log names the episode it scored.
      const scheduler::holder scoring = gpus_.add_holder(rc_.run_id + "/" + name + "/final");
      const bench::eval_report r = score_solution(p, ep / "workspace" / "solution.py", e, gpus_, scoring);
      write_json_atomically(ep / "final_eval.json", bench::to_json(r));
      f.gpu_seconds = gpus_.usage_of(who).gpu_seconds + gpus_.usage_of(scoring).gpu_seconds;
      const metrics::episode_result res = make_result(p, r, f);
      write_json_atomically(ep / "result.json", metrics::to_json(res));
      metrics::append_result(rc_.o.out / "results.jsonl", res);
      const bool faster = res.correct && res.speedup && *res.speedup > 1.0 + res.noise.value_or(0);
      prog_.finished(name, res.verdict, res.correct, faster, res.speedup);
      return res.correct;
    } catch (...) {
      prog_.finished(name, "error", false, false, std::nullopt);
      throw;
    }
  }

 private:
  void run_agent(const bench::problem& p, const fs::path& ep, const std::string& name, scheduler::holder who,
                 episode_facts& f) {
    std::optional<agent::chosen_model> demo;
    llm::client* client = rc_.client.get();
    if (rc_.demo) {
      demo = demo_model(rc_, p);
      client = demo->client.get();
    }
    // A finished transcript (the crash came between its end and the scoring) needs only scoring.
    std::optional<agent::transcript_file> old;
    if (auto existing = agent::latest_transcript(ep)) old = agent::read_transcript(*existing);
    if (old && old->finished()) {
      const json& totals = old->outcome["totals"];
      f.end_reason = old->outcome.value("reason", "model_error");
      f.used.steps = totals.value("steps", 0);
      f.used.input_tokens = totals.value("input_tokens", 0);
      f.used.output_tokens = totals.value("output_tokens", 0);
      f.used.dollars = totals.value("dollars", 0.0);
      f.used.wall_seconds = totals.value("wall_seconds", 0.0);
      return;
    }

    pkb::context ctx;
    ctx.problem = p;
    ctx.eval = base_eval(rc_);
    ctx.workspace = ep / "workspace";
    ctx.gpus = &gpus_;
    ctx.holder = who;
    ctx.check_trials = rc_.o.check_trials;
    ctx.command_timeout_s = rc_.cfg.limits.command_timeout_seconds;
    ctx.run_sandbox.isolation = rc_.o.isolation;
    ctx.run_sandbox.hidden = hidden_from_episodes(rc_);
    pkb::add_python(ctx.run_sandbox);
    ctx.log = ep / "pkb.jsonl";
    ctx.task_dir = rc_.task_dir.at(p.id);
    pkb::server srv(ctx, ep / "pkb");

    agent::episode_options opt;
    opt.cfg = rc_.cfg;
    opt.prompts = rc_.prompts;
    opt.model = demo ? demo->config : rc_.model;
    opt.sandbox.isolation = rc_.o.isolation;
    opt.sandbox.hidden = hidden_from_episodes(rc_);
    attach_pkb(opt.sandbox, srv, rc_.pkb_binary);
    opt.on_event = [this, &name](const json& e) {
      if (e.value("type", "") == "response" && e.contains("response")) {
        const json& t = e["response"].value("tokens", json::object());
        prog_.spent(t.value("input", 0L) + t.value("output", 0L), e["response"].value("cost_usd", 0.0));
      }
      if (on_event_) on_event_(name, e);
    };

    agent::episode_result er;
    if (old && !old->header.is_null()) {
      opt.cfg = agent::agent_config_from_json(old->header["config"]);
      agent::task_spec task = agent::task_from_header(old->header);
      prog_.note(fmt::format("resuming {}: {} complete steps recorded", name, old->complete_steps()));
      er = agent::resume_episode(*old, task, std::move(opt), client, ep);
    } else {
      if (old) {  // a transcript with no readable header holds nothing to resume
        fs::remove(old->path);
      }
      agent::task_spec task;
      task.id = p.name();
      task.text = rc_.task_text.at(p.id);
      task.workspace = rc_.task_dir.at(p.id);
      er = agent::start_episode(task, std::move(opt), client, ep);
    }
    f.end_reason = std::string(agent::to_string(er.reason));
    f.used = er.used;
  }

  void run_zeroshot(const bench::problem& p, const fs::path& ep, episode_facts& f) {
    std::optional<agent::chosen_model> demo;
    llm::client* client = rc_.client.get();
    if (rc_.demo) {
      demo = demo_model(rc_, p);
      client = demo->client.get();
    }
    const auto system = agent::prompt_template::load(rc_.prompts_dir / "problem" / "zeroshot_system.md", {});
    const auto user = agent::prompt_template::load(rc_.prompts_dir / "problem" / "zeroshot.md", {"problem"});
    const zero_shot_outcome z = run_zero_shot(*client, demo ? demo->config : rc_.model, p.name(), system.render({}),
                                              user.render({{"problem", rc_.task_text.at(p.id)}}), ep);
    prog_.spent(z.used.input_tokens + z.used.output_tokens, z.used.dollars);
    f.end_reason = z.end_reason;
    f.used = z.used;
  }

  run_context& rc_;
  scheduler::gpu_scheduler& gpus_;
  progress& prog_;
  const std::function<void(const std::string&, const json&)>& on_event_;
};

}  // namespace

runner::runner(run_options o, scheduler::gpu_scheduler& gpus) : o_(std::move(o)), gpus_(gpus) {}

run_summary runner::run() {
  run_context rc;
  rc.o = o_;
  if (rc.o.samples < 1) throw std::invalid_argument("--samples must be at least 1");
  if (rc.o.jobs < 1) throw std::invalid_argument("--jobs must be at least 1");
  const auto suite = bench::load_suite(rc.o.suite.empty() ? bench::default_suite_dir() : rc.o.suite);
  for (int id : rc.o.problems) {
    const bench::problem& p = bench::find_problem(suite, std::to_string(id));
    if (!p.supports_world(rc.o.world))
      throw std::invalid_argument(fmt::format("problem {} does not support world size {}; choose --world among "
                                              "its sizes or leave it out of --problems", p.name(), rc.o.world));
    rc.problems.push_back(p);
  }
  rc.hw = bench::load_hardware_spec(rc.o.hardware.empty() ? bench::default_hardware_spec() : rc.o.hardware);
  rc.prompts_dir = or_default(rc.o.prompts, "prompts");
  rc.cfg = agent::load_agent_config(or_default(rc.o.agent_config, "config/agent.toml"));
  agent::apply_overrides(rc.cfg, rc.o.overrides);
  if (!rc.o.gpu_seconds_cap && rc.cfg.limits.gpu_seconds > 0) rc.o.gpu_seconds_cap = rc.cfg.limits.gpu_seconds;
  rc.prompts = agent::prompt_set::load(rc.prompts_dir);
  rc.demo = rc.o.model == "demo";
  if (rc.demo) {
    rc.model.name = "demo";
  } else {
    agent::chosen_model m =
        agent::choose_model(rc.o.model, or_default(rc.o.models, "config/models.toml"), rc.o.max_output_tokens);
    rc.model = m.config;
    rc.client = std::move(m.client);
  }
  rc.pkb_binary = rc.o.pkb_binary.empty() ? fs::read_symlink("/proc/self/exe").parent_path() / "pkb" : rc.o.pkb_binary;
  if (rc.o.mode == metrics::run_mode::agent && ::access(rc.pkb_binary.c_str(), X_OK) != 0)
    throw std::invalid_argument(fmt::format("the pkb tool {} is missing; build it (ninja pkb) or pass --pkb PATH",
                                            rc.pkb_binary.string()));
  rc.run_id = open_run_dir(rc.o);

  // Task directories: written once per problem, shared read-only by its episodes.
  problem_view view;
  view.world = rc.o.world;
  view.device = rc.o.device;
  view.check_trials = rc.o.check_trials;
  view.final_trials = rc.o.final_trials;
  view.hardware = rc.hw;
  view.kernels_runtime = kernels_runtime_available();
  for (const auto& p : rc.problems) {
    const std::string text = render_problem(p, view, rc.prompts_dir);
    const fs::path dir = rc.o.out / "tasks" / p.name();
    // Resumed episodes check the task's content hash: rewrite only when it changed.
    std::error_code ec;
    if (!fs::exists(dir / "PROBLEM.md", ec) || read_text(dir / "PROBLEM.md") != text)
      write_task_dir(dir, p, text, rc.prompts_dir);
    rc.task_text[p.id] = text;
    rc.task_dir[p.id] = fs::absolute(dir);
  }

  // What earlier invocations scored.
  std::set<std::pair<int, int>> recorded;
  std::vector<metrics::episode_result> earlier;
  if (fs::exists(rc.o.out / "results.jsonl")) {
    for (auto& r : metrics::read_results(rc.o.out / "results.jsonl").results) {
      if (r.run_id != rc.run_id) continue;
      recorded.insert({r.problem_id, r.sample});
      earlier.push_back(r);
    }
  }
  std::vector<std::pair<const bench::problem*, int>> todo;
  run_summary s;
  // Sample-major order (every problem's sample 0, then every sample 1 ...): episodes that run at
  // once are of different problems, so a problem's reference outputs are computed by its first
  // final scoring and found in the cache by the later ones, not computed by two at a time.
  for (int k = 0; k < rc.o.samples; ++k)
    for (const auto& p : rc.problems) {
      ++s.episodes;
      if (recorded.count({p.id, k})) {
        ++s.skipped;
        continue;
      }
      // Scored, but the crash came before its results line: append it from result.json.
      const fs::path saved = episode_dir(rc.o.out, p, k) / "result.json";
      if (fs::exists(saved)) {
        std::ifstream in(saved);
        const json j = json::parse(in, nullptr, false);
        try {
          const metrics::episode_result r = metrics::result_from_json(j);
          metrics::append_result(rc.o.out / "results.jsonl", r);
          earlier.push_back(r);
          ++s.skipped;
          continue;
        } catch (const std::exception&) {
          // unreadable: score it again
        }
      }
      todo.emplace_back(&p, k);
    }

  progress prog(s.episodes, s.skipped, stderr, ::isatty(STDERR_FILENO) == 1, rc.o.quiet);
  for (const auto& r : earlier) {
    s.correct += r.correct;
    prog.restored(r.correct, r.correct && r.speedup && *r.speedup > 1.0 + r.noise.value_or(0),
                  r.tokens_in + r.tokens_out, r.dollars);
  }
  if (s.skipped > 0) prog.note(fmt::format("{}: {} of {} episodes already scored; running the other {}",
                                           rc.o.out.string(), s.skipped, s.episodes, todo.size()));
  lease_log leases(gpus_, rc.o.out / "leases.jsonl");
  run_driver driver(rc, gpus_, prog, on_event);
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  auto worker = [&] {
    while (true) {
      const std::size_t i = next++;
      if (i >= todo.size()) return;
      const auto [p, k] = todo[i];
      try {
        const bool correct = driver.run_one(*p, k);
        std::lock_guard lock(mu);
        ++s.finished;
        s.correct += correct;
      } catch (const std::exception& e) {
        prog.note(fmt::format("episode {}/sample-{} failed: {}", p->name(), k, e.what()));
        std::lock_guard lock(mu);
        ++s.failed;
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    const int n = std::min<int>(rc.o.jobs, static_cast<int>(todo.size()));
    for (int j = 0; j < n; ++j) pool.emplace_back(worker);
  }
  return s;
}

}  // namespace pk::run
