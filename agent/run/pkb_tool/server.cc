#include "agent/run/pkb_tool/server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

#include <fmt/format.h>

#include "bench/eval/multicast_scan.h"
#include "bench/eval/report.h"
#include "agent/run/pkb_tool/compiler_output.h"
#include "agent/run/pkb_tool/profile.h"
#include "config/paths.h"

namespace pk::pkb {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Where `pkb profile` shows pkagent inside the sandbox (it runs pkagent eval under ncu).
constexpr std::string_view profile_bin_inside = "/run/pkb-profile/pkagent";

double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The judge's report, with the failing rank's log shaped rather than shown raw.
std::string describe(bench::eval_report r) {
  std::string log = std::move(r.log);
  r.log.clear();
  std::string out = bench::render_text(r);
  if (!log.empty()) out += "--- output of the failing rank (shaped) ---\n" + shape_compiler_output(log);
  return out;
}

std::optional<fs::path> find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::vector<std::string> dirs;
  while (true) {
    const auto colon = rest.find(':');
    dirs.emplace_back(rest.substr(0, colon));
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  dirs.emplace_back("/usr/local/cuda/bin");
  for (const std::string& d : dirs) {
    if (d.empty()) continue;
    fs::path p = fs::path(d) / name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return std::nullopt;
}

}  // namespace

std::string usage() {
  return "usage: pkb COMMAND\n"
         "  check            compile solution.py and check it on the visible trials (diff summary)\n"
         "  bench            time solution.py against the reference: speedup, fraction of the bound\n"
         "  profile          Nsight Compute summary of solution.py's kernels (ncu --clock-control none)\n"
         "  run -- CMD...    run CMD in a sandbox with the problem's GPUs (your shell has none);\n"
         "                   one argument is a shell line (pkb run -- 'make && ./t'), several are run\n"
         "                   as they are, with no shell (pkb run -- ./t 'a file name')\n"
         "  submit           a last check; then end the episode with the submit action\n"
         "Each command leases the GPUs only while it runs; GPU time counts against the episode's budget.\n";
}

server::server(context ctx, fs::path socket_dir) : ctx_(std::move(ctx)), dir_(std::move(socket_dir)) {
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  const fs::path sock = socket_path();
  fs::remove(sock);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (sock.native().size() >= sizeof addr.sun_path)
    throw std::runtime_error(fmt::format("pkb socket path {} is longer than {} bytes; use a shorter --out",
                                         sock.string(), sizeof addr.sun_path - 1));
  std::strcpy(addr.sun_path, sock.c_str());
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 8) != 0 || ::pipe2(wake_fd_, O_CLOEXEC) != 0) {
    const std::string why = std::strerror(errno);
    if (listen_fd_ >= 0) ::close(listen_fd_);
    throw std::runtime_error(fmt::format("cannot listen on {}: {}", sock.string(), why));
  }
  ::chmod(sock.c_str(), 0777);  // the sandbox's user must be able to connect
  thread_ = std::jthread([this](std::stop_token st) { serve(st); });
}

server::~server() {
  thread_.request_stop();
  if (wake_fd_[1] >= 0) (void)!::write(wake_fd_[1], "x", 1);
  if (thread_.joinable()) thread_.join();
  for (int fd : {listen_fd_, wake_fd_[0], wake_fd_[1]})
    if (fd >= 0) ::close(fd);
  std::error_code ec;
  fs::remove(socket_path(), ec);
}

void server::serve(std::stop_token stop) {
  while (!stop.stop_requested()) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents || stop.stop_requested()) return;
    const int conn = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) continue;
    std::string line;
    reply r;
    if (!read_line(conn, line, max_request_bytes)) {
      r = {2, "pkb: the request could not be read\n"};
    } else {
      try {
        r = handle(decode_request(line), stop);
      } catch (const std::exception& e) {
        r = {2, fmt::format("pkb: bad request: {}\n", e.what())};
      }
    }
    write_all(conn, encode_reply(r));
    ::close(conn);
  }
}

void server::log(const json& line) {
  if (ctx_.log.empty()) return;
  std::lock_guard lock(log_mutex_);
  std::ofstream out(ctx_.log, std::ios::app);
  out << line.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
}

namespace {

std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// What a command would run with: the workspace's files, less unchanged copies of the task's own
// (whose docs name the forbidden instructions). Code generated while the command runs escapes
// this; the evaluator's scans after each run (check, bench, final scoring) still see its output.
std::vector<bench::multicast_finding> scan_workspace(const fs::path& workspace, const fs::path& task_dir,
                                                     const fs::path& clean_cache) {
  std::set<fs::path> skip;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(workspace, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec) || task_dir.empty()) continue;
    const fs::path original = task_dir / fs::relative(it->path(), workspace);
    if (fs::is_regular_file(original, ec) && fs::file_size(original, ec) == it->file_size(ec) &&
        file_bytes(original) == file_bytes(it->path()))
      skip.insert(it->path());
  }
  bench::multicast_scan_options so;
  so.clean_cache = clean_cache;
  return bench::scan_multicast_tree({{workspace, "workspace"}}, skip, so);
}

}  // namespace

reply server::handle(const std::vector<std::string>& argv, std::stop_token stop) {
  ++requests_;
  const std::string cmd = argv.empty() ? "help" : argv[0];
  if (cmd == "help" || cmd == "--help" || cmd == "-h") return {0, usage()};
  const bool known = cmd == "check" || cmd == "bench" || cmd == "profile" || cmd == "run" || cmd == "submit";
  if (!known) return {2, fmt::format("pkb: unknown command '{}'\n{}", cmd, usage())};
  std::size_t cmd_from = 1;
  if (cmd == "run") {
    if (argv.size() > 1 && argv[1] == "--") cmd_from = 2;
    if (cmd_from >= argv.size()) return {2, "pkb run: give the command after --, e.g. pkb run -- python3 test.py\n"};
  } else if (argv.size() > 1) {
    return {2, fmt::format("pkb {}: takes no arguments (it works on ./solution.py)\n", cmd)};
  }

  json entry = {{"command", cmd}, {"requested_at", epoch_seconds()}};
  const auto asked = std::chrono::steady_clock::now();
  scheduler::acquire_result got = ctx_.gpus->acquire(ctx_.holder, ctx_.eval.world, stop);
  if (!got) {
    entry["refused"] = std::string(scheduler::to_string(got.reason()));
    log(entry);
    if (got.reason() == scheduler::refusal::over_cap)
      return {3, fmt::format("pkb {}: the episode's GPU budget is spent ({}); submit what you have\n", cmd,
                             got.message())};
    return {3, fmt::format("pkb {}: no GPUs: {}\n", cmd, got.message())};
  }
  scheduler::lease& lease = got.value();
  entry["lease_start"] = epoch_seconds();
  entry["lease_wait_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
  entry["gpus"] = lease.gpus();
  const bool cuda = ctx_.eval.device == "cuda";
  // A request answered before anything ran still ends its lease and its log line.
  auto end_early = [&](reply early) {
    entry["exit"] = early.exit;
    entry["lease_end"] = epoch_seconds();
    lease.release();
    log(entry);
    return early;
  };

  reply r;
  const fs::path solution = ctx_.workspace / "solution.py";
  bench::eval_options o = ctx_.eval;
  o.progress = nullptr;
  if (cuda) o.gpus = lease.gpus();
  try {
    if (cmd == "check" || cmd == "submit" || cmd == "bench") {
      o.seed = ctx_.check_seed;
      o.perf = cmd == "bench";
      o.trials = cmd == "bench" ? 1 : ctx_.check_trials;
      const bench::eval_report rep = bench::evaluate(ctx_.problem, solution, o);
      r = {rep.ok() ? 0 : 1, describe(rep)};
      if (cmd == "submit")
        r.output += rep.ok() ? "ready: solution.py passes the visible trials; end the episode with the submit action "
                               "(final scoring uses hidden inputs and more trials)\n"
                             : "not ready: fix solution.py first (or submit anyway with the submit action)\n";
      entry["verdict"] = bench::to_string(rep.result);
    } else {
      sandbox::spec s = ctx_.run_sandbox;
      s.workspace = ctx_.workspace;
      if (cuda) s.gpus = lease.gpus();
      s.limits.wall = std::chrono::milliseconds(static_cast<long long>(ctx_.command_timeout_s * 1000));
      // One word is a shell command line (pipes, &&); several are exec'd as an argv, with no shell.
      const std::vector<std::string> words(argv.begin() + static_cast<std::ptrdiff_t>(cmd_from), argv.end());
      std::string command = words.size() == 1 ? words.front() : std::string();
      const fs::path clean = bench::multicast_clean_cache(o);
      fs::create_directories(clean);
      if (const auto found = scan_workspace(ctx_.workspace, ctx_.task_dir, clean); !found.empty()) {
        entry["refused"] = "multicast";
        return end_early({1, fmt::format("pkb {}: refused, nothing was run. {}\n", cmd, bench::describe_multicast(found))});
      }
      if (cmd == "profile") {
        const auto ncu = find_on_path("ncu");
        if (!ncu || !cuda) {
          return end_early({1, !cuda ? "pkb profile: this run uses --device cpu, so there is no GPU to profile\n"
                                     : "pkb profile: Nsight Compute (ncu) is not installed on this host (not on PATH, "
                                       "not in /usr/local/cuda/bin), so there is no profile; pkb bench gives timings\n"});
        }
        // pkagent itself and the problems, visible inside even where they live under /tmp.
        const fs::path self = ctx_.pkagent.empty() ? fs::read_symlink("/proc/self/exe") : ctx_.pkagent;
        fs::path dir = fs::absolute(ctx_.problem.dir).lexically_normal();
        if (!dir.has_filename()) dir = dir.parent_path();  // "…/1_allreduce/"
        const fs::path suite = dir.parent_path();
        const fs::path home = fs::absolute(config::home());
        s.binds.push_back({self, std::string(profile_bin_inside), false});
        s.binds.push_back({suite, suite, false});
        s.binds.push_back({home, home, false});
        // ncu gets the command's time less a margin for the plain trial before it and the CSV
        // export after it, so that a hang still ends in its own log.
        const int ncu_s = std::max(10, static_cast<int>(ctx_.command_timeout_s * 0.75) - 10);
        command = profile_command({*ncu, profile_bin_inside, suite, ctx_.problem.id, ctx_.eval.world,
                                   ctx_.check_seed, ncu_s});
      }
      const sandbox::result sr = words.size() > 1 ? sandbox::run_argv(s, words) : sandbox::run(s, command);
      std::string text = sr.out.text;
      if (!sr.err.text.empty()) text += (text.empty() || text.back() == '\n' ? "" : "\n") + sr.err.text;
      if (sr.timed_out) text += fmt::format("\n[pkb {}: timed out after {:.0f} s]\n", cmd, ctx_.command_timeout_s);
      if (cmd == "profile") text = summarize_profile(text, sr.shell_status());
      r = {sr.shell_status(), text};
    }
  } catch (const std::invalid_argument& e) {
    r = {2, fmt::format("pkb {}: {}\n", cmd, e.what())};
  } catch (const std::exception& e) {
    r = {3, fmt::format("pkb {}: the tool failed (not your code): {}\n", cmd, e.what())};
  }
  entry["lease_end"] = epoch_seconds();
  lease.release();
  entry["exit"] = r.exit;
  entry["gpu_seconds_used"] = ctx_.gpus->usage_of(ctx_.holder).gpu_seconds;
  log(entry);
  return r;
}

}  // namespace pk::pkb
