#include "bench/eval/process_census.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "config/read_file.h"

namespace pk::bench {

namespace fs = std::filesystem;

namespace {

std::vector<int> all_pids() {
  std::vector<int> pids;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename();
    if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit)) pids.push_back(std::stoi(name));
  }
  return pids;
}

std::string pid_namespace(int pid) {
  std::error_code ec;
  return fs::read_symlink(fmt::format("/proc/{}/ns/pid", pid), ec).string();
}

int parent_of(int pid) {
  const std::string stat = try_read_file(fmt::format("/proc/{}/stat", pid)).value_or("");  // gone: no parent
  const auto close = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 1));
  std::string state;
  int ppid = 0;
  rest >> state >> ppid;
  return ppid;
}

// The pid as the process's own namespace numbers it (the last NSpid field).
int inner_pid(int pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("NSpid:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      int v = 0, last = 0;
      while (fields >> v) last = v;
      return last;
    }
  return 0;
}

std::string describe(int pid) {
  std::string cmd = try_read_file(fmt::format("/proc/{}/cmdline", pid)).value_or("");
  std::replace(cmd.begin(), cmd.end(), '\0', ' ');
  while (!cmd.empty() && cmd.back() == ' ') cmd.pop_back();
  if (cmd.size() > 200) cmd = cmd.substr(0, 197) + "...";
  return fmt::format("pid {}: {}", pid, cmd.empty() ? "(no command line)" : cmd);
}

}  // namespace

std::vector<std::string> stray_processes(const std::vector<int>& rank_pids, bool sandboxed) {
  std::vector<std::string> found;
  if (rank_pids.empty() || std::find(rank_pids.begin(), rank_pids.end(), 0) != rank_pids.end()) return found;
  const std::set<int> ranks(rank_pids.begin(), rank_pids.end());
  std::set<int> allowed = ranks;
  for (int r : rank_pids) allowed.insert(parent_of(r));
  const std::string ns = sandboxed ? pid_namespace(rank_pids.front()) : "";
  const auto pids = all_pids();
  if (!ns.empty()) {
    for (int pid : pids) {
      if (allowed.count(pid) || pid_namespace(pid) != ns) continue;
      if (inner_pid(pid) == 1) continue;  // the sandbox's init
      found.push_back(describe(pid));
    }
    return found;
  }
  // No namespace to go by: the ranks' descendants (a child that daemonised escapes this count,
  // which only happens without a sandbox).
  std::map<int, int> parent;
  for (int pid : pids) parent[pid] = parent_of(pid);
  for (int pid : pids) {
    if (allowed.count(pid)) continue;
    for (int p = parent[pid], hops = 0; p > 1 && hops < 64; p = parent[p], ++hops)
      if (ranks.count(p)) {
        found.push_back(describe(pid));
        break;
      }
  }
  return found;
}

}  // namespace pk::bench
