#include "bench/eval/rank_supervisor.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "sandbox/process.h"

extern char** environ;

namespace pk::bench {

namespace fs = std::filesystem;
using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;

json to_json(const launch_spec& s) {
  return {{"python", s.python},
          {"worker", s.worker},
          {"plan", s.plan},
          {"out_dir", s.out_dir},
          {"world", s.world},
          {"device", s.device},
          {"import_timeout_s", s.import_timeout_s},
          {"phase_timeout_s", s.phase_timeout_s},
          {"threads_per_rank", s.threads_per_rank}};
}

launch_spec launch_spec_from_json(const json& j) {
  launch_spec s;
  s.python = j.at("python");
  s.worker = j.at("worker");
  s.plan = j.at("plan");
  s.out_dir = j.at("out_dir");
  s.world = j.at("world");
  s.device = j.at("device");
  s.import_timeout_s = j.at("import_timeout_s");
  s.phase_timeout_s = j.at("phase_timeout_s");
  s.threads_per_rank = j.at("threads_per_rank");
  return s;
}

namespace {

// A free TCP port on loopback for the rendezvous. The tiny window between closing this socket
// and rank 0 binding it only matters without a private network namespace (--sandbox none).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("cannot create a socket to find a free port");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot bind a loopback port for the ranks' rendezvous");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string read_small(const fs::path& p) {
  std::ifstream in(p);
  std::string s(std::istreambuf_iterator<char>(in), {});
  return s.substr(0, 200);
}

struct rank_watch {
  std::string phase = "start";
  clock_type::time_point since = clock_type::now();
};

}  // namespace

int supervise_ranks(const fs::path& workspace) {
  launch_spec spec;
  try {
    std::ifstream in(workspace / "launch.json");
    spec = launch_spec_from_json(json::parse(in));
  } catch (const std::exception& e) {
    fmt::print(stderr, "pkagent _ranks: {}: bad launch.json: {}\n", workspace.string(), e.what());
    return 2;
  }
  const fs::path out = workspace / spec.out_dir;
  fs::create_directories(out);

  std::map<std::string, std::string> base_env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) base_env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  base_env["MASTER_ADDR"] = "127.0.0.1";
  base_env["MASTER_PORT"] = std::to_string(free_port());
  base_env["WORLD_SIZE"] = std::to_string(spec.world);
  base_env["LOCAL_WORLD_SIZE"] = std::to_string(spec.world);
  base_env["PYTHONUNBUFFERED"] = "1";
  base_env["PYTHONDONTWRITEBYTECODE"] = "1";
  // NVLink multicast is forbidden on our machines (and by the project's rules).
  base_env["NCCL_NVLS_ENABLE"] = "0";
  base_env["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1";
  base_env["NVSHMEM_DISABLE_NVLS"] = "1";
  if (!base_env.count("TORCH_CUDA_ARCH_LIST")) base_env["TORCH_CUDA_ARCH_LIST"] = "9.0";
  if (spec.device == "cpu") base_env["OMP_NUM_THREADS"] = std::to_string(spec.threads_per_rank);

  sandbox::process_set ranks;
  std::vector<rank_watch> watch(static_cast<std::size_t>(spec.world));
  for (int r = 0; r < spec.world; ++r) {
    sandbox::process_spec ps;
    ps.argv = {spec.python, spec.worker, spec.plan};
    ps.env = base_env;
    ps.env["RANK"] = std::to_string(r);
    ps.env["LOCAL_RANK"] = std::to_string(r);
    ps.cwd = workspace;
    ps.output_cap = 64 << 10;
    ranks.start(ps);
  }

  // Watch: the first rank to fail or to overstay its phase ends the run for all.
  json failure = nullptr;
  std::size_t returned = 0;
  while (returned < ranks.size()) {
    if (auto id = ranks.wait_any(std::chrono::milliseconds(100))) {
      ++returned;
      const auto& res = ranks.result(*id);
      if (!res.ok() && !res.killed && failure.is_null()) {
        failure = {{"kind", "exit"}, {"rank", *id}, {"phase", watch[*id].phase}};
        ranks.kill_all();
      }
      continue;
    }
    const auto now = clock_type::now();
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      if (ranks.finished(r)) continue;
      std::string phase = read_small(out / fmt::format("rank{}", r) / "phase");
      if (!phase.empty() && phase != watch[r].phase) watch[r] = {phase, now};
      const bool importing = watch[r].phase == "start" || watch[r].phase == "import";
      const double limit = importing ? spec.import_timeout_s : spec.phase_timeout_s;
      if (failure.is_null() && now - watch[r].since > std::chrono::duration<double>(limit)) {
        failure = {{"kind", "timeout"}, {"rank", r}, {"phase", watch[r].phase}, {"limit_s", limit}};
        ranks.kill_all();
      }
    }
  }

  json result = {{"failure", failure}, {"ranks", json::array()}};
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const auto& res = ranks.result(r);
    result["ranks"].push_back({{"rank", r},
                               {"exit_code", res.exit_code},
                               {"signal", res.signal},
                               {"killed", res.killed},
                               {"phase", watch[r].phase},
                               {"wall_s", res.wall_seconds},
                               {"stdout", res.out.text},
                               {"stderr", res.err.text}});
  }
  std::ofstream(workspace / "ranks.json") << result.dump(-1, ' ', false, json::error_handler_t::replace);
  return 0;
}

}  // namespace pk::bench
