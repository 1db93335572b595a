#include "agent/run/replay_tools.h"

#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agent/episode_dir.h"
#include "agent/run/pkb_binding.h"
#include "agent/run/pkb_tool/commands.h"
#include "agent/run/scheduler/allocated_gpus.h"
#include "bench/suite/suite.h"
#include "sandbox/gpu_devices.h"

namespace pk::run {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// What the recorded episode's pkb tool worked on.
struct recorded_tool {
  fs::path run;
  std::string problem;
  fs::path suite, hardware;  // empty: the defaults
  bench::device_kind device = bench::default_device;
  int world = 2;
  int check_trials = 2;
  std::optional<double> gpu_seconds_cap;
};

std::optional<json> run_plan(const fs::path& run) {
  std::ifstream in(run / "run.json");
  if (!in) return std::nullopt;
  json plan = json::parse(in, nullptr, false);
  if (!plan.is_object() || plan.value("format", "") != "pkagent-run") return std::nullopt;
  return plan;
}

std::optional<recorded_tool> recorded_pkb(const agent::transcript_file& t) {
  const json& tools = t.header.value("tools", json());
  if (tools.is_object() && tools.contains("pkb")) {
    try {
      const json& p = tools.at("pkb");
      recorded_tool r{p.at("run").get<std::string>(), p.at("problem").get<std::string>(),
                      p.value("suite", ""), p.value("hardware", ""), p.at("device").get<bench::device_kind>(),
                      p.at("world").get<int>(), p.value("check_trials", 2), std::nullopt};
      if (p.contains("gpu_seconds_cap") && !p["gpu_seconds_cap"].is_null()) r.gpu_seconds_cap = p["gpu_seconds_cap"].get<double>();
      return r;
    } catch (const json::exception& e) {
      throw std::invalid_argument(fmt::format("{}: the header's tools.pkb cannot be read ({}), so its pkb tool "
                                              "cannot be attached; --no-exec renders it", t.path.string(), e.what()));
    }
  }
  // Older transcripts do not name their tools: a run's episode starts from OUT/tasks/<id>_<stem>.
  const json& task = t.header.value("task", json::object());
  if (!task.contains("workspace") || !task["workspace"].is_string()) return std::nullopt;
  const fs::path workspace = fs::path(task["workspace"].get<std::string>()).lexically_normal();
  if (workspace.parent_path().filename() != "tasks") return std::nullopt;
  const fs::path run = workspace.parent_path().parent_path();
  const auto plan = run_plan(run);
  if (!plan) return std::nullopt;
  try {
    return recorded_tool{run, workspace.filename().string(), {}, {}, plan->at("device").get<bench::device_kind>(),
                         plan->value("world", 2), plan->value("check_trials", 2), std::nullopt};
  } catch (const json::exception& e) {
    throw std::invalid_argument(fmt::format("{}: the run's plan cannot be read ({}), so its pkb tool cannot be "
                                            "attached; --no-exec renders it", (run / "run.json").string(), e.what()));
  }
}

// The GPUs (or CPU slots) the replay leases, or why there are none.
std::vector<int> lease_slots(bench::device_kind device, int world, const agent::transcript_file& t,
                             const recorded_tool& rec) {
  if (device == bench::device_kind::cpu) {
    std::vector<int> slots;
    for (int i = 0; i < world; ++i) slots.push_back(i);  // one world: an episode's commands run one at a time
    return slots;
  }
  const std::vector<int> host = sandbox::host_gpu_indices();
  if (host.empty())
    throw std::invalid_argument(fmt::format(
        "{}: its pkb commands ran on {} and this host has no NVIDIA GPU (/dev/nvidia*), so they cannot "
        "re-execute as recorded; replay it on a GPU host, or with --device cpu (gloo: correctness re-executes, "
        "timings will differ, CUDA code fails)",
        t.path.string(), rec.device == bench::device_kind::cuda ? "GPUs" : to_string(device)));
  const scheduler::gpu_allocation allocation = scheduler::allocated_gpus(host);
  if (static_cast<int>(allocation.gpus.size()) < world)
    throw std::invalid_argument(fmt::format("{}: its problem runs on {} GPUs and this process may use only {} ({}), "
                                            "so its pkb commands cannot re-execute here",
                                            t.path.string(), world, allocation.gpus.size(), allocation.source));
  return allocation.gpus;
}

// What the run's episodes shared, as far as its pkb tool needs it.
run_setup tool_setup(const recorded_tool& rec, bench::device_kind device, const agent::replay_request& req,
                     const agent::episode_options& opt) {
  run_setup setup;
  setup.o.out = rec.run;
  setup.o.suite = rec.suite;
  setup.o.hardware = rec.hardware;
  setup.o.device = device;
  setup.o.world = rec.world;
  setup.o.check_trials = rec.check_trials;
  setup.o.gpu_seconds_cap = rec.gpu_seconds_cap;
  setup.o.isolation = opt.sandbox.isolation;
  setup.machine = run_machine(device, rec.world, rec.hardware);
  setup.cfg = opt.cfg;
  setup.tool_texts =
      std::make_shared<const pkb::tool_texts>(pkb::tool_texts::load(req.prompts_dir, pkb::command_names()));
  setup.pkb_binary = find_pkb_binary({});
  return setup;
}

const bench::problem& recorded_problem(const std::vector<bench::problem>& suite, const recorded_tool& rec,
                                       const agent::transcript_file& t) {
  try {
    const bench::problem& p = bench::find_problem(suite, rec.problem);
    if (p.name() != rec.problem) throw std::invalid_argument(fmt::format("the suite's problem is {}", p.name()));
    return p;
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: its problem {} is not in the suite {} ({}), so its pkb commands "
                                            "cannot re-execute", t.path.string(), rec.problem,
                                            (rec.suite.empty() ? bench::default_suite_dir() : rec.suite).string(),
                                            e.what()));
  }
}

class run_tools : public agent::attached_tools {
 public:
  run_tools(run_setup setup, const bench::problem& problem, std::vector<int> slots, const fs::path& out,
            agent::episode_options& opt)
      : setup_(std::move(setup)), problem_(problem), slots_(slots), gpus_(std::move(slots)) {
    const scheduler::holder who = gpus_.add_holder("replay/" + problem_.name(), setup_.o.gpu_seconds_cap);
    fs::create_directories(out);
    server_ = std::make_unique<pkb::server>(tool_context(setup_, problem_, out, gpus_, who), out / "pkb");
    opt.sandbox.hidden = hidden_from_episodes(setup_);
    attach_pkb(opt.sandbox, *server_, setup_.pkb_binary);
    opt.tools = tool_record(setup_, problem_);
  }

  std::string description() const override {
    return fmt::format("pkb tool attached: problem {}, world {}, {}", problem_.name(), setup_.o.world,
                       setup_.o.device == bench::device_kind::cpu
                           ? fmt::format("on cpu (gloo, {} evaluation slots)", slots_.size())
                           : fmt::format("on cuda (leases of GPUs {})", fmt::join(slots_, ",")));
  }

 private:
  run_setup setup_;
  bench::problem problem_;
  std::vector<int> slots_;
  scheduler::gpu_scheduler gpus_;
  std::unique_ptr<pkb::server> server_;  // declared last: it ends, with its leases, before the scheduler
};

}  // namespace

std::unique_ptr<agent::attached_tools> attach_run_tools(const agent::replay_request& req,
                                                         agent::episode_options& opt) {
  const std::optional<recorded_tool> rec = recorded_pkb(req.recorded);
  if (!rec) return nullptr;
  const bench::device_kind device = req.device.value_or(rec->device);
  std::vector<int> slots = lease_slots(device, rec->world, req.recorded, *rec);
  const auto suite = bench::load_suite(rec->suite.empty() ? bench::default_suite_dir() : rec->suite);
  const bench::problem& problem = recorded_problem(suite, *rec, req.recorded);
  run_setup setup = tool_setup(*rec, device, req, opt);
  // Unchanged copies of the task's files are not scanned for multicast (pkb_tool/request.h).
  setup.task_dir[problem.id] = agent::task_from_header(req.recorded.header).workspace;
  return std::make_unique<run_tools>(std::move(setup), problem, std::move(slots), req.out_dir, opt);
}

}  // namespace pk::run
