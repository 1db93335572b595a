#include "bench/eval/sets/rank_set.h"

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <stop_token>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/eval/untrusted_file.h"
#include "config/enum_names.h"
#include "sandbox/gpu_guard.h"
#include "sandbox/mounts.h"
#include "sandbox/process.h"

extern char** environ;

namespace pk::bench {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr std::array<config::enum_name<set_role>, 2> set_role_names = {{
    {set_role::reference, "reference"},
    {set_role::candidate, "candidate"},
}};

}  // namespace

std::string to_string(set_role r) { return std::string(config::enum_to_string(set_role_names, r)); }

namespace {

constexpr std::size_t max_line_bytes = 4 << 20;    // replies are small; more is not our worker
constexpr std::uint64_t max_ranks_json = 1 << 20;  // the supervisor caps each stream at 64 KiB
const fs::path socket_dir_inside = "/run/pkjudge";
constexpr const char* plan_file = "plan.json";

// pkagent supervises every set's ranks itself (`pkagent _ranks`): a set starts only while its
// binary is still where it was. One replaced by a rebuild would start another version, or nothing
// (the failed start would read as the candidate's), so it is refused with the fix.
fs::path self_executable() {
  const std::string exe = fs::read_symlink("/proc/self/exe").string();
  constexpr std::string_view gone = " (deleted)";
  if (exe.ends_with(gone))
    throw std::runtime_error(fmt::format(
        "pkagent's own executable {} was replaced or removed while pkagent ran (a rebuild?), and every "
        "process set runs it as the ranks' supervisor: restart pkagent",
        exe.substr(0, exe.size() - gone.size())));
  return exe;
}

// One connection from a rank: its bytes not yet split into lines and the lines not yet taken.
struct link {
  int fd = -1;
  int pid = 0;
  std::string buffer;
  std::deque<json> inbox;
  bool closed = false;
  std::optional<long> awaiting;  ///< the id of the command whose reply is due
  std::optional<long> last_sent;  ///< the id of the last command sent
};

int peer_pid(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  return ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 ? cred.pid : 0;
}

}  // namespace

struct rank_set::impl {
  rank_set_spec spec;
  fs::path control_dir;
  int listener = -1;
  int exit_event = -1;
  std::vector<link> ranks;               ///< by rank; fd -1 until its hello
  std::vector<link> unnamed;             ///< accepted, hello not read yet
  std::optional<rank_failure> latched;   ///< a violation seen while doing something else
  long next_id = 1;
  bool awaiting_ready = true;
  set_role role = set_role::candidate;
  std::optional<std::string> go_line;    ///< sent to every rank once the set has its evaluation
  std::atomic<bool> ended{false};
  std::mutex ending_mutex;
  rank_set_ending ending;
  std::string run_error;                 ///< the sandbox could not run at all
  fs::path exe;                          ///< pkagent, which supervises the ranks
  std::map<fs::path, std::string> written;  ///< the judge's files in the workspace, as written
  /// The sandbox while it runs, to stop everything in it between the set's turns.
  std::shared_ptr<sandbox::live_group> live = std::make_shared<sandbox::live_group>();
  std::jthread runner;

  ~impl() {
    runner.request_stop();
    if (runner.joinable()) runner.join();
    for (auto& l : ranks)
      if (l.fd >= 0) ::close(l.fd);
    for (auto& l : unnamed)
      if (l.fd >= 0) ::close(l.fd);
    if (listener >= 0) ::close(listener);
    if (exit_event >= 0) ::close(exit_event);
    std::error_code ec;
    if (!control_dir.empty()) fs::remove_all(control_dir, ec);
  }

  // Where the run-time multicast guard of the set's processes leaves its evidence: the judge's
  // private directory, bound in at the guard's own path.
  fs::path guard_log() const { return control_dir / "multicast_guard.log"; }

  void latch(rank_failure f) {
    if (!latched) latched = std::move(f);
  }

  void start_listening() {
    std::string tmpl = (fs::temp_directory_path() / "pkagent-judge-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("cannot create the judge's socket directory");
    control_dir = tmpl;
    const fs::path sock = control_dir / "ctl.sock";
    listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (listener < 0 || sock.string().size() >= sizeof addr.sun_path)
      throw std::runtime_error("cannot create the judge's socket");
    std::strncpy(addr.sun_path, sock.c_str(), sizeof addr.sun_path - 1);
    if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener, 64) != 0)
      throw std::runtime_error(fmt::format("cannot listen on {}: {}", sock.string(), std::strerror(errno)));
    exit_event = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (exit_event < 0) throw std::runtime_error("eventfd failed");
  }

  void run(std::stop_token stop) {
    rank_set_ending e;
    try {
      if (spec.isolation == sandbox::isolation::none) {
        sandbox::process_spec ps;
        ps.argv = {exe.string(), ranks_subcommand, spec.workspace.string()};
        for (char** v = environ; *v; ++v) {
          std::string kv = *v;
          auto eq = kv.find('=');
          if (eq != std::string::npos) ps.env[kv.substr(0, eq)] = kv.substr(eq + 1);
        }
        for (const auto& [k, v] : spec.env) ps.env[k] = v;
        if (!spec.gpus.empty()) ps.env["CUDA_VISIBLE_DEVICES"] = fmt::format("{}", fmt::join(spec.gpus, ","));
        for (const auto& [k, v] : sandbox::gpu_guard_env(guard_log(), ps.env["LD_PRELOAD"])) ps.env[k] = v;
        ps.cwd = spec.workspace;
        ps.timeout = spec.wall_limit;
        ps.die_with_parent = true;
        sandbox::process_set set;
        set.start(ps);
        while (!set.wait_any(std::chrono::milliseconds(50)))
          if (stop.stop_requested()) set.kill(0);
        const auto& r = set.result(0);
        e.sandbox.exit_code = r.exit_code;
        e.sandbox.signal = r.signal;
        e.sandbox.timed_out = r.timed_out;
        e.sandbox.wall_seconds = r.wall_seconds;
        e.sandbox.out = r.out;
        e.sandbox.err = r.err;
      } else {
        sandbox::spec s;
        s.workspace = spec.workspace;
        s.gpus = spec.gpus;
        s.multicast_guard = true;
        s.limits.wall = spec.wall_limit;
        s.limits.output_bytes = 256 << 10;
        s.binds = spec.binds;
        s.binds.push_back({exe.parent_path(), exe.parent_path(), false});
        s.own_libraries = true;  // pkagent runs itself inside: its libraries may be in a hidden tree
        s.binds.push_back({control_dir, socket_dir_inside, false});
        if (!spec.jit_dir.empty()) s.binds.push_back({spec.jit_dir, sandbox::workspace_inside / "ext", true});
        s.binds.push_back(sandbox::guard_log_bind(guard_log()));
        s.hidden = spec.hidden;
        s.env = spec.env;
        s.isolation = spec.isolation;
        s.stop = stop;
        s.live = live;
        e.sandbox = sandbox::run(s, fmt::format("exec '{}' {} /workspace", exe.string(), ranks_subcommand));
      }
    } catch (const std::exception& ex) {
      std::lock_guard lock(ending_mutex);
      run_error = ex.what();
    }
    // Whatever ran in the set has ended: its files no longer change.
    const auto refused = sandbox::read_guard_log(guard_log()).refusals();
    if (!refused.empty()) e.multicast_refusals = sandbox::describe_refusals(refused);
    if (untrusted_file_exists(spec.workspace, "ranks.json")) {
      try {
        e.ranks = ranks_report_from_json(json::parse(read_untrusted(spec.workspace, "ranks.json", max_ranks_json)));
      } catch (const std::exception&) {
        e.ranks.reset();
      }
    }
    {
      std::lock_guard lock(ending_mutex);
      ending = std::move(e);
    }
    ended = true;
    const std::uint64_t one = 1;
    (void)!::write(exit_event, &one, sizeof one);
  }

  // Reads what is available on `l`; complete lines go to its inbox.
  void drain(link& l, int rank) {
    char buf[65536];
    while (true) {
      const ssize_t n = ::recv(l.fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) l.closed = true;
        break;
      }
      if (n == 0) {
        l.closed = true;
        break;
      }
      l.buffer.append(buf, static_cast<std::size_t>(n));
      std::size_t nl;
      while ((nl = l.buffer.find('\n')) != std::string::npos) {
        std::string line = l.buffer.substr(0, nl);
        l.buffer.erase(0, nl + 1);
        json j = json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object()) {
          latch({rank_failure::kind::tampered, rank, "", "", "sent the judge a line that is not a JSON object"});
          continue;
        }
        l.inbox.push_back(std::move(j));
      }
      if (l.buffer.size() > max_line_bytes)
        latch({rank_failure::kind::tampered, rank, "", "", "sent the judge an oversized message"});
    }
  }

  void accept_all() {
    while (true) {
      const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) return;
      link l;
      l.fd = fd;
      l.pid = peer_pid(fd);
      unnamed.push_back(std::move(l));
    }
  }

  // A new connection's first line names its rank.
  void name_connections() {
    for (auto it = unnamed.begin(); it != unnamed.end();) {
      drain(*it, -1);
      if (it->inbox.empty()) {
        if (it->closed) {
          ::close(it->fd);
          it = unnamed.erase(it);
        } else {
          ++it;
        }
        continue;
      }
      const json hello = it->inbox.front();
      it->inbox.pop_front();
      const json r = hello.value("hello", json());
      const int rank = r.is_number_integer() ? r.get<int>() : -1;
      if (rank < 0 || rank >= static_cast<int>(ranks.size()) || ranks[static_cast<std::size_t>(rank)].fd >= 0) {
        latch({rank_failure::kind::tampered, rank, "", "",
               fmt::format("a process (pid {}) connected to the judge's socket as rank {} (a second or unknown "
                           "connection: only the judge's own workers connect there)",
                           it->pid, r.dump())});
        ::close(it->fd);
      } else {
        link& l = ranks[static_cast<std::size_t>(rank)];
        l = std::move(*it);
        if (go_line) write_line(l, *go_line);
      }
      it = unnamed.erase(it);
    }
  }

  void write_line(link& l, const std::string& line) {
    if (l.fd < 0 || l.closed) return;  // await_replies reports the missing answer
    std::size_t sent = 0;
    while (sent < line.size()) {
      pollfd p{l.fd, POLLOUT, 0};
      ::poll(&p, 1, 1000);
      const ssize_t n = ::send(l.fd, line.data() + sent, line.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      if (n <= 0) {
        l.closed = true;
        return;
      }
      sent += static_cast<std::size_t>(n);
    }
  }
};

rank_set::rank_set(rank_set_spec spec) : impl_(std::make_unique<impl>()) {
  impl& m = *impl_;
  m.spec = std::move(spec);
  m.exe = self_executable();
  if (m.spec.isolation == sandbox::isolation::bwrap)
    if (auto why = sandbox::unavailable_reason()) throw sandbox::sandbox_error(*why);
  m.ranks.resize(static_cast<std::size_t>(m.spec.launch.world));
  m.start_listening();
  m.spec.launch.socket =
      ((m.spec.isolation == sandbox::isolation::none ? m.control_dir : socket_dir_inside) / "ctl.sock").string();
  const fs::path launch = m.spec.workspace / "launch.json";
  m.written[launch] = to_json(m.spec.launch).dump(2);
  std::ofstream(launch) << m.written[launch];
  m.runner = std::jthread([&m](std::stop_token st) { m.run(st); });
}

rank_set::~rank_set() = default;

const fs::path& rank_set::workspace() const { return impl_->spec.workspace; }
const fs::path& rank_set::jit_dir() const { return impl_->spec.jit_dir; }
bool rank_set::ended() const { return impl_->ended; }

void rank_set::go(set_role role, json plan) {
  impl& m = *impl_;
  m.role = role;
  for (const auto& [k, v] : m.spec.plan_base.items())
    if (!plan.contains(k)) plan[k] = v;
  const fs::path file = m.spec.workspace / plan_file;
  m.written[file] = plan.dump(2);
  std::ofstream(file) << m.written[file];
  m.go_line = json{{"cmd", "go"}, {"plan", plan_file}}.dump() + "\n";
  // Ranks named already get it now; the others when they are named (name_connections).
  for (auto& l : m.ranks)
    if (l.fd >= 0) m.write_line(l, *m.go_line);
  m.accept_all();
  m.name_connections();
}

set_role rank_set::role() const { return impl_->role; }
int rank_set::world() const { return impl_->spec.launch.world; }
const std::map<fs::path, std::string>& rank_set::written_files() const { return impl_->written; }
int rank_set::rank_pid(int rank) const { return impl_->ranks.at(static_cast<std::size_t>(rank)).pid; }

void rank_set::send(int rank, json command) {
  link& l = impl_->ranks.at(static_cast<std::size_t>(rank));
  const long id = impl_->next_id++;
  command["id"] = id;
  l.awaiting = id;
  l.last_sent = id;
  impl_->awaiting_ready = false;
  impl_->write_line(l, command.dump() + "\n");
}

void rank_set::await_second_answer() {
  for (link& l : impl_->ranks) l.awaiting = l.last_sent;
}

void rank_set::send_all(const json& command) {
  for (int r = 0; r < world(); ++r) send(r, command);
}

void rank_set::pause() {
  for (const link& l : impl_->ranks)
    if (l.pid > 0) ::kill(l.pid, SIGSTOP);
  impl_->live->freeze(true);
}

void rank_set::resume() {
  impl_->live->freeze(false);
  for (const link& l : impl_->ranks)
    if (l.pid > 0) ::kill(l.pid, SIGCONT);
}

std::string rank_set::pause_limit() const {
  if (impl_->spec.isolation == sandbox::isolation::none) return "no sandbox";
  return impl_->live->why_not();
}

void rank_set::stop() { impl_->runner.request_stop(); }

const rank_set_ending& rank_set::finish() {
  if (impl_->runner.joinable()) impl_->runner.join();
  if (!impl_->run_error.empty()) throw std::runtime_error(impl_->run_error);
  return impl_->ending;
}

namespace {

// The first rank of `m` still to answer whose next message is an error it reports.
std::optional<rank_failure> reported_error(const rank_set::impl& m, const std::vector<json>& replies,
                                           const std::string& phase) {
  for (std::size_t r = 0; r < m.ranks.size(); ++r) {
    const link& l = m.ranks[r];
    if (!replies[r].is_null() || l.inbox.empty() || !l.inbox.front().contains("error")) continue;
    const json& e = l.inbox.front()["error"];
    const std::string p = e.is_object() ? e.value("phase", "") : "";
    return rank_failure{rank_failure::kind::reported, static_cast<int>(r), p.empty() ? phase : p,
                        e.is_object() ? e.value("kind", "") : "", e.is_object() ? e.value("message", "") : e.dump()};
  }
  return std::nullopt;
}

// What taking the answers waiting in a set's inboxes found.
struct taken_replies {
  bool all = true;                        ///< every rank looked at had answered (up to an unasked message)
  std::optional<rank_failure> unasked;    ///< a message the judge did not ask for (tampering)
  std::optional<rank_failure> gone;       ///< the first rank gone without its answer
};

// Moves each rank's due answer from its inbox into `replies`.
taken_replies take_replies(rank_set::impl& m, std::vector<json>& replies) {
  taken_replies t;
  for (std::size_t r = 0; r < m.ranks.size(); ++r) {
    link& l = m.ranks[r];
    if (!replies[r].is_null()) continue;
    if (!l.inbox.empty()) {
      json reply = std::move(l.inbox.front());
      l.inbox.pop_front();
      const bool ready_due = m.awaiting_ready && !l.awaiting;
      const bool ok = ready_due ? reply.value("ready", false)
                                : l.awaiting && reply.value("id", json()) == json(*l.awaiting) &&
                                      reply.value("ok", false);
      if (!ok) {
        t.gone.reset();
        t.unasked = rank_failure{rank_failure::kind::tampered, static_cast<int>(r), "", "",
                                 fmt::format("answered the judge with a message it did not ask for: {}",
                                             reply.dump().substr(0, 300))};
        return t;
      }
      l.awaiting.reset();
      replies[r] = std::move(reply);
      continue;
    }
    t.all = false;
    const bool gone = l.closed || (m.ended && l.fd < 0) || (m.ended && l.inbox.empty());
    if (gone && !t.gone) t.gone = rank_failure{rank_failure::kind::exited, static_cast<int>(r), "", "", ""};
  }
  return t;
}

// Sleeps until one of the sets has something to read (a connection, its sandbox's exit, a message),
// at most `left_ms` and never more than 200 ms.
void poll_sets(const std::vector<const rank_set::impl*>& sets, long long left_ms) {
  std::vector<pollfd> fds;
  for (const rank_set::impl* m : sets) {
    fds.push_back({m->listener, POLLIN, 0});
    if (!m->ended) fds.push_back({m->exit_event, POLLIN, 0});
    for (const auto& l : m->unnamed) fds.push_back({l.fd, POLLIN, 0});
    for (const auto& l : m->ranks)
      if (l.fd >= 0 && !l.closed) fds.push_back({l.fd, POLLIN, 0});
  }
  ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<long long>(left_ms, 1, 200)));
}

}  // namespace

std::optional<rank_failure> await_replies(std::span<rank_set* const> sets, const std::string& phase,
                                          rank_set::clock::time_point deadline, std::vector<std::vector<json>>& replies) {
  replies.assign(sets.size(), {});
  for (std::size_t i = 0; i < sets.size(); ++i) replies[i].assign(static_cast<std::size_t>(sets[i]->world()), json());
  std::size_t i = 0;  // the set being looked at: failures are its
  auto fail = [&](rank_failure f) {
    if (f.phase.empty()) f.phase = phase;
    f.set = sets[i]->role();
    return std::optional<rank_failure>(std::move(f));
  };
  // Which failure is reported: a reference set's at once (the judge's own problem, whatever the
  // candidate did); a candidate set's only once no reference set in the wait can still fail too,
  // or after a grace (both sets run the same command: a broken input generator fails both, and
  // must not read as the candidate's fault). A rank whose connection closed without an answer
  // counts only after half a second: the rank that really failed (the others are then killed by
  // their supervisor) may still have its error on the way.
  using tp = rank_set::clock::time_point;
  std::vector<std::optional<rank_failure>> failed(sets.size());
  std::vector<std::optional<tp>> closed_since(sets.size());
  std::optional<tp> first_candidate_failure;
  auto record = [&](std::optional<rank_failure> f) -> bool {  // true: report it now
    if (sets[i]->role() == set_role::reference) return true;
    failed[i] = std::move(f);
    if (!first_candidate_failure) first_candidate_failure = rank_set::clock::now();
    return false;
  };
  while (true) {
    bool all = true;
    for (i = 0; i < sets.size(); ++i) {
      if (failed[i]) continue;
      rank_set::impl& m = *sets[i]->impl_;
      m.accept_all();
      m.name_connections();
      for (std::size_t r = 0; r < m.ranks.size(); ++r)
        if (m.ranks[r].fd >= 0) m.drain(m.ranks[r], static_cast<int>(r));
      if (m.latched) {
        if (auto f = fail(*m.latched); record(f)) return f;
        continue;
      }
      if (auto e = reported_error(m, replies[i], phase)) {
        if (auto f = fail(*e); record(f)) return f;
        continue;
      }
      const taken_replies taken = take_replies(m, replies[i]);
      all = all && taken.all;
      if (taken.unasked) {
        if (auto f = fail(*taken.unasked); record(f)) return f;
        continue;
      }
      if (taken.gone) {
        const std::optional<rank_failure> gone_rank = fail(*taken.gone);
        if (!closed_since[i]) closed_since[i] = rank_set::clock::now();
        if (rank_set::clock::now() - *closed_since[i] > std::chrono::milliseconds(500) && record(gone_rank))
          return gone_rank;
      }
    }
    // A candidate set's failure, once no reference set can still fail on the same command.
    if (first_candidate_failure) {
      bool reference_pending = false;
      for (i = 0; i < sets.size(); ++i)
        if (sets[i]->role() == set_role::reference && !failed[i])
          for (const auto& r : replies[i]) reference_pending = reference_pending || r.is_null();
      if (!reference_pending || rank_set::clock::now() - *first_candidate_failure > std::chrono::seconds(3))
        for (const auto& f : failed)
          if (f) return f;
    }
    if (all) return std::nullopt;
    const auto now = rank_set::clock::now();
    if (now >= deadline) {
      for (const auto& f : failed)
        if (f) return f;
      for (i = 0; i < sets.size(); ++i)
        for (std::size_t r = 0; r < replies[i].size(); ++r)
          if (replies[i][r].is_null()) return fail({rank_failure::kind::timeout, static_cast<int>(r), phase, "", ""});
    }
    std::vector<const rank_set::impl*> impls;
    for (rank_set* s : sets) impls.push_back(s->impl_.get());
    poll_sets(impls, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());
  }
}

}  // namespace pk::bench
