// spec -> plan: every decision about how a command is isolated is made here, as data.
#include "sandbox/plan.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sandbox/cgroup.h"
#include "sandbox/mounts.h"
#include "sandbox/own_libraries.h"
#include "sandbox/rlimits.h"
#include "sandbox/seccomp_filter.h"

namespace pk::sandbox {

namespace fs = std::filesystem;

namespace {

std::string host_home(const env_map& env) {
  auto it = env.find("HOME");
  return it == env.end() || it->second.empty() ? "/root" : it->second;
}

// NVLink multicast is refused at run time in every process given GPUs (gpu_guard.h), and where
// the spec asks for it; a GPU sandbox without the guard is not made.
std::vector<fs::path> gpu_preload(const spec& s, const host_facts& host) {
  if (s.gpus.empty() && !s.multicast_guard) return {};
  std::error_code ec;
  if (!fs::is_regular_file(host.multicast_guard, ec)) {
    throw sandbox_error(fmt::format("the multicast guard {} is missing, and no GPU is lent without it: build it "
                                    "(cmake --build build --target pk_multicast_guard)",
                                    host.multicast_guard.string()));
  }
  return {host.multicast_guard};
}

// The spec's binds, then pkagent's own library directories where the sandbox hides them.
std::vector<bind_mount> binds_for(const spec& s, const host_facts& host, const std::string& home) {
  std::vector<bind_mount> binds = s.binds;
  if (!s.own_libraries) return binds;
  for (const fs::path& dir : library_dirs_under(host.loaded_objects, hidden_host_paths(home, s.hidden))) {
    const bool listed = std::any_of(binds.begin(), binds.end(), [&](const bind_mount& b) { return b.inside == dir; });
    if (!listed) binds.push_back({dir, dir, false});
  }
  return binds;
}

}  // namespace

host_facts host_facts::current() {
  host_facts facts;
  facts.environment = host_environment();
  const auto path = facts.environment.find("PATH");
  facts.bwrap = find_executable("bwrap", path == facts.environment.end() ? "/usr/local/bin:/usr/bin:/bin" : path->second);
  facts.pids_cgroup = detect_cgroups().has_pids();
  facts.loaded_objects = loaded_shared_objects();
  return facts;
}

std::string single_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

namespace {

/// What runs at the end of the plan: a shell line (bash -lc; bash -c unsandboxed, where no
/// login profile has to restore PATH) or an argv exec'd as given.
struct what_runs {
  const std::string* line = nullptr;
  const std::vector<std::string>* argv = nullptr;

  std::vector<std::string> words(bool login) const {
    if (line) return {"bash", login ? "-lc" : "-c", *line};
    if (argv->empty()) throw std::invalid_argument("no command given to run in the sandbox");
    return *argv;
  }
};

plan plan_for(const spec& s, const what_runs& command, const host_facts& host) {
  if (s.workspace.empty()) throw sandbox_error("no workspace given; pass --workspace DIR");
  plan p;
  p.cwd = fs::absolute(s.workspace).lexically_normal();
  p.rlimits = rlimits_for(s.limits, !host.pids_cgroup);

  const std::vector<fs::path> preload = gpu_preload(s, host);
  if (s.isolation == isolation::none) {
    // No namespaces: the host's own GPU numbering applies and its home stays the home.
    env_map gpu;
    if (!preload.empty()) gpu = gpu_guard_env({}, {}, preload.front());
    if (!s.gpus.empty()) gpu["CUDA_VISIBLE_DEVICES"] = fmt::format("{}", fmt::join(s.gpus, ","));
    if (!s.gpus.empty()) gpu["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    p.env = sandbox_environment(host.environment, host_home(host.environment), s.env, gpu);
    p.argv = command.words(false);
    p.warnings.push_back(
        "--sandbox=none: this command runs UNSANDBOXED on the host (its files, network, devices and "
        "processes are reachable); only the timeout and resource limits apply");
    return p;
  }

  if (host.bwrap.empty()) {
    throw sandbox_error(
        "bubblewrap (bwrap) is not installed: install it (apt-get install bubblewrap, or run "
        "scripts/install-deps), or run unsandboxed with --sandbox=none");
  }
  const std::string home = host_home(host.environment);
  const gpu_binding gpus = bind_gpus(s.gpus, host.gpu_paths);
  p.env = sandbox_environment(host.environment, home, s.env, gpus.env);

  p.argv = {host.bwrap};
  if (host.network_namespace) {
    p.argv.push_back("--unshare-all");  // user (where possible), ipc, pid, net (private lo), uts, cgroup
  } else {
    p.argv.insert(p.argv.end(), {"--unshare-user-try", "--unshare-ipc", "--unshare-pid", "--unshare-uts",
                                 "--unshare-cgroup-try"});
  }
  p.argv.insert(p.argv.end(), {"--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname",
                               "pkagent-sandbox"});
  const filesystem_layout layout{s.workspace, home, s.limits.tmp_bytes, binds_for(s, host, home), s.hidden, host.root,
                                 preload, ld_so_preload_fd};
  const auto fs_args = filesystem_args(layout);
  p.argv.insert(p.argv.end(), fs_args.begin(), fs_args.end());
  if (!preload.empty()) p.fd_data.emplace_back(ld_so_preload_fd, ld_so_preload_text(layout));
  p.argv.insert(p.argv.end(), gpus.bwrap_args.begin(), gpus.bwrap_args.end());

  // bash -l runs /etc/profile, which on Debian resets PATH; the home's .bash_profile (read
  // after it) puts the sandbox's PATH back.
  p.fd_data.emplace_back(profile_fd, fmt::format("PATH={}\nexport PATH\n", single_quoted(p.env["PATH"])));
  p.argv.insert(p.argv.end(), {"--file", std::to_string(profile_fd), (fs::path(home) / ".bash_profile").string()});
  p.fd_data.emplace_back(seccomp_fd, seccomp_program({.block_inet = !host.network_namespace}));
  p.argv.insert(p.argv.end(), {"--seccomp", std::to_string(seccomp_fd)});

  p.argv.push_back("--");
  const std::vector<std::string> words = command.words(true);
  p.argv.insert(p.argv.end(), words.begin(), words.end());
  return p;
}

}  // namespace

plan make_plan(const spec& s, const std::string& line, const host_facts& host) {
  return plan_for(s, {.line = &line}, host);
}

plan make_plan(const spec& s, const std::string& line) { return make_plan(s, line, host_facts::current()); }

plan make_argv_plan(const spec& s, const std::vector<std::string>& argv, const host_facts& host) {
  return plan_for(s, {.argv = &argv}, host);
}

plan make_argv_plan(const spec& s, const std::vector<std::string>& argv) {
  return make_argv_plan(s, argv, host_facts::current());
}

}  // namespace pk::sandbox
