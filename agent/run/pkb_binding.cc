#include "agent/run/pkb_binding.h"

#include <cstdlib>

#include "agent/run/pkb_tool/python_env.h"

namespace pk::run {

pkb::context tool_context(const run_setup& setup, const bench::problem& problem, const std::filesystem::path& ep,
                          scheduler::gpu_scheduler& gpus, scheduler::holder who) {
  pkb::context tool;
  tool.problem = problem;
  tool.eval = base_eval(setup);
  tool.workspace = ep / "workspace";
  tool.gpus = &gpus;
  tool.holder = who;
  tool.check_trials = setup.o.check_trials;
  tool.command_timeout_s = setup.cfg.limits.command_timeout_seconds;
  tool.run_sandbox.isolation = setup.o.isolation;
  tool.run_sandbox.hidden = hidden_from_episodes(setup);
  pkb::add_python(tool.run_sandbox);
  tool.log = ep / "pkb.jsonl";
  tool.task_dir = setup.task_dir.at(problem.id);
  tool.texts = setup.tool_texts;
  return tool;
}

nlohmann::json tool_record(const run_setup& setup, const bench::problem& problem) {
  auto absolute = [](const std::filesystem::path& p) {
    return p.empty() ? std::string() : std::filesystem::absolute(p).lexically_normal().string();
  };
  const auto& cap = setup.o.gpu_seconds_cap;
  return {{"pkb", {{"run", absolute(setup.o.out)},
                   {"problem", problem.name()},
                   {"suite", absolute(setup.o.suite)},
                   {"hardware", absolute(setup.o.hardware)},
                   {"device", setup.o.device},
                   {"world", setup.o.world},
                   {"check_trials", setup.o.check_trials},
                   {"gpu_seconds_cap", cap ? nlohmann::json(*cap) : nlohmann::json()}}}};
}

void attach_pkb(sandbox::spec& s, const pkb::server& srv, const std::filesystem::path& pkb_binary) {
  const char* host_path = std::getenv("PATH");
  const std::string path = host_path && *host_path ? host_path : "/usr/local/bin:/usr/bin:/bin";
  if (s.isolation == sandbox::isolation::none) {
    // Nothing is bound without bwrap: point the client at the real socket and binary.
    s.env[std::string(pkb::socket_env)] = srv.socket_path().string();
    s.env["PATH"] = pkb_binary.parent_path().string() + ":" + path;
  } else {
    s.env["PATH"] = std::string(pkb::bin_dir_inside) + ":" + path;
    s.binds.push_back({srv.socket_dir(), std::string(pkb::socket_dir_inside), false});
    s.binds.push_back({pkb_binary, std::string(pkb::bin_dir_inside) + "/pkb", false});
  }
  pkb::add_python(s);  // python3 in the shell is the evaluator's, with torch
}

}  // namespace pk::run
