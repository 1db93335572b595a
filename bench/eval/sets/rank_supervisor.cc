#include "bench/eval/sets/rank_supervisor.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "config/read_file.h"
#include "sandbox/process.h"

extern char** environ;

namespace pk::bench {

namespace fs = std::filesystem;
using json = nlohmann::json;

json to_json(const launch_spec& s) {
  return {{"python", s.python}, {"worker", s.worker}, {"socket", s.socket},
          {"world", s.world},   {"device", s.device}, {"threads_per_rank", s.threads_per_rank}};
}

launch_spec launch_spec_from_json(const json& j) {
  launch_spec s;
  s.python = j.at("python");
  s.worker = j.at("worker");
  s.socket = j.at("socket");
  s.world = j.at("world");
  s.device = j.at("device");
  s.threads_per_rank = j.at("threads_per_rank");
  return s;
}

json to_json(const ranks_report& r) {
  json ranks = json::array();
  for (const rank_exit& e : r.ranks)
    ranks.push_back({{"rank", e.rank},
                     {"exit_code", e.exit_code},
                     {"signal", e.signal},
                     {"killed", e.killed},
                     {"stdout", e.stdout_text},
                     {"stderr", e.stderr_text}});
  return {{"ranks", ranks}};
}

ranks_report ranks_report_from_json(const json& j) {
  ranks_report r;
  for (const json& e : j.at("ranks"))
    r.ranks.push_back({e.at("rank").get<int>(), e.at("exit_code").get<int>(), e.at("signal").get<int>(),
                       e.at("killed").get<bool>(), e.at("stdout").get<std::string>(),
                       e.at("stderr").get<std::string>()});
  return r;
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

}  // namespace

int supervise_ranks(const fs::path& workspace) {
  launch_spec spec;
  try {
    spec = launch_spec_from_json(json::parse(read_file(workspace / "launch.json")));
  } catch (const std::exception& e) {
    fmt::print(stderr, "pkagent {}: {}: bad launch.json: {}\n", ranks_subcommand, workspace.string(), e.what());
    return 2;
  }

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
  base_env["PK_JUDGE_SOCKET"] = spec.socket;
  // NVLink multicast is forbidden on our machines (and by the project's rules).
  base_env["NCCL_NVLS_ENABLE"] = "0";
  base_env["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1";
  base_env["NVSHMEM_DISABLE_NVLS"] = "1";
  // torch.compile compiles in the rank itself, not in a pool of worker processes that would
  // outlive the call (the judge treats leftover processes as background work).
  base_env["TORCHINDUCTOR_COMPILE_THREADS"] = "1";
  if (!base_env.count("TORCH_CUDA_ARCH_LIST")) base_env["TORCH_CUDA_ARCH_LIST"] = "9.0";
  if (spec.device == device_kind::cpu) base_env["OMP_NUM_THREADS"] = std::to_string(spec.threads_per_rank);

  sandbox::process_set ranks;
  for (int r = 0; r < spec.world; ++r) {
    sandbox::process_spec ps;
    ps.argv = {spec.python, spec.worker};
    ps.env = base_env;
    ps.env["RANK"] = std::to_string(r);
    ps.env["LOCAL_RANK"] = std::to_string(r);
    ps.cwd = workspace;
    ps.output_cap = 64 << 10;
    ps.die_with_parent = true;  // a rank busy in a collective never sees the judge go
    ranks.start(ps);
  }
  // The first rank to fail ends the set: the others would wait for it in a collective.
  std::size_t returned = 0;
  while (returned < ranks.size()) {
    if (auto id = ranks.wait_any()) {
      ++returned;
      const auto& res = ranks.result(*id);
      if (!res.ok() && !res.killed) ranks.kill_all();
    }
  }
  ranks_report report;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const auto& res = ranks.result(r);
    report.ranks.push_back({static_cast<int>(r), res.exit_code, res.signal, res.killed, res.out.text, res.err.text});
  }
  std::ofstream(workspace / "ranks.json") << to_json(report).dump(-1, ' ', false, json::error_handler_t::replace);
  return 0;
}

}  // namespace pk::bench
