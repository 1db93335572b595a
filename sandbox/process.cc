#include "sandbox/process.h"

#include "sandbox/process_group.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <deque>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/process/args.hpp>
#include <boost/process/async_pipe.hpp>
#include <boost/process/child.hpp>
#include <boost/process/env.hpp>
#include <boost/process/environment.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/group.hpp>
#include <boost/process/io.hpp>
#include <boost/process/start_dir.hpp>
#include <fmt/format.h>

namespace pk::sandbox {

namespace asio = boost::asio;
namespace bp = boost::process;
using clock_type = std::chrono::steady_clock;

// Boost's search_path needs the compiled Boost.Filesystem, which the GPU host lacks; a PATH
// walk with access(X_OK) is all it would do for us.
std::string find_executable(const std::string& name, const std::string& path_var) {
  for (std::size_t begin = 0; begin <= path_var.size();) {
    auto end = path_var.find(':', begin);
    if (end == std::string::npos) end = path_var.size();
    if (end > begin) {
      std::string candidate = path_var.substr(begin, end - begin) + "/" + name;
      if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) return candidate;
    }
    begin = end + 1;
  }
  return {};
}

int process_result::shell_status() const {
  if (timed_out) return 124;
  if (signal != 0) return 128 + signal;
  return exit_code;
}

namespace {

#ifndef CLOSE_RANGE_CLOEXEC
constexpr unsigned CLOSE_RANGE_CLOEXEC = 1U << 2;
#endif

// Output still held open by a descendant that escaped the process group (setsid) after the
// child itself exited is read for this long, then abandoned.
constexpr auto drain_grace = std::chrono::milliseconds(500);

// How long the rest of a killed process group may take to die before the child's result is
// reported anyway (a process in uninterruptible sleep can outlive SIGKILL for a while).
constexpr auto group_exit_limit = std::chrono::milliseconds(2000);

/// The step between fork and exec. Runs in the forked child of a possibly multi-threaded
/// parent, so it makes only async-signal-safe calls on data prepared beforehand.
struct pre_exec : bp::extend::handler {
  const process_spec* spec = nullptr;
  std::vector<std::string> join_errors;  ///< one message per join file, formatted in advance
  pid_t parent = ::getpid();

  template <class Executor>
  void on_exec_setup(Executor& exec) const {
    // First: a parent killed from here on takes the child along, and one killed since the fork
    // has already handed it to init (or a subreaper), which getppid shows.
    if (spec->die_with_parent && (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent)) ::_exit(127);
    // Descriptors of other children (and of other threads' work) must not leak into this
    // one: mark everything above stderr close-on-exec (Boost's own error pipe included, which
    // is close-on-exec anyway), then hand over the descriptors the spec passes.
    if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
      for (int fd = 3; fd < 4096; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    for (auto [from, to] : spec->pass_fds) {
      if (from == to ? ::fcntl(to, F_SETFD, 0) != 0 : ::dup2(from, to) < 0) {
        fail(exec, "passing a descriptor to the child failed");
      }
    }
    // Ignored signals stay ignored across exec; pkagent ignores SIGPIPE, the child must not.
    ::signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);

    char pid_text[24];
    const int pid_len = format_pid(pid_text);
    for (std::size_t i = 0; i < spec->join_files.size(); ++i) {
      const int fd = ::open(spec->join_files[i].c_str(), O_WRONLY | O_CLOEXEC);
      const bool ok = fd >= 0 && ::write(fd, pid_text, pid_len) == pid_len;
      if (fd >= 0) ::close(fd);
      if (!ok) fail(exec, join_errors[i].c_str());
    }
    for (const auto& limit : spec->rlimits) {
      // A limit only ever lowers: above the current hard limit it would need privileges.
      const auto resource = static_cast<__rlimit_resource_t>(limit.resource);
      struct rlimit value{static_cast<rlim_t>(limit.value), static_cast<rlim_t>(limit.value)};
      struct rlimit current{};
      if (::getrlimit(resource, &current) == 0 && current.rlim_max != RLIM_INFINITY &&
          value.rlim_max > current.rlim_max) {
        value.rlim_cur = value.rlim_max = current.rlim_max;
      }
      if (::setrlimit(resource, &value) != 0) {
        fail(exec, "setrlimit failed");
      }
    }
  }

  template <class Executor>
  [[noreturn]] static void fail(Executor& exec, const char* what) {
    exec.set_error(std::error_code(errno, std::system_category()), what);  // reported to start()
    ::_exit(127);
  }

  static int format_pid(char (&buf)[24]) {
    char rev[24];
    int n = 0;
    for (auto pid = static_cast<unsigned long>(::getpid()); pid != 0 || n == 0; pid /= 10) {
      rev[n++] = static_cast<char>('0' + pid % 10);
    }
    for (int i = 0; i < n; ++i) buf[i] = rev[n - 1 - i];
    return n;
  }
};

std::string resolve_executable(const process_spec& spec) {
  const std::string& name = spec.argv.front();
  if (name.find('/') != std::string::npos) return name;
  std::string path_var;
  if (auto it = spec.env.find("PATH"); it != spec.env.end()) {
    path_var = it->second;
  } else if (const char* own = std::getenv("PATH")) {
    path_var = own;
  }
  std::string found = find_executable(name, path_var);
  if (found.empty()) throw process_error(fmt::format("cannot start '{}': not found on PATH ({})", name, path_var));
  return found;
}

}  // namespace

struct process_set::impl {
  struct child_state {
    explicit child_state(asio::io_context& ioc, const process_spec& s)
        : spec(s), out_pipe(ioc), err_pipe(ioc), in_pipe(ioc), deadline(ioc), grace(ioc),
          out_capture(s.output_cap), err_capture(s.output_cap) {}

    process_spec spec;
    bp::async_pipe out_pipe, err_pipe, in_pipe;
    asio::steady_timer deadline, grace;
    output_capture out_capture, err_capture;
    std::array<char, 65536> out_buf{}, err_buf{};
    int pid = -1;
    clock_type::time_point started;
    bool exited = false, out_open = true, err_open = true, finished = false;
    process_result result;
  };

  asio::io_context ioc;
  asio::signal_set sigchld{ioc, SIGCHLD};
  bool sigchld_armed = false;
  std::vector<std::unique_ptr<child_state>> children;
  std::deque<std::size_t> ready;  ///< finished, not yet returned by wait_any
  std::size_t returned = 0;       ///< how many wait_any has returned

  impl() { ::signal(SIGPIPE, SIG_IGN); }

  std::size_t start(const process_spec& spec) {
    if (spec.argv.empty()) throw process_error("cannot start a process: empty argv");
    const std::string exe = resolve_executable(spec);
    auto state = std::make_unique<child_state>(ioc, spec);
    child_state& c = *state;

    bp::environment env;
    for (const auto& [key, value] : spec.env) env[key] = value;
    std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());
    pre_exec setup;
    setup.spec = &c.spec;
    for (const auto& file : spec.join_files) {
      setup.join_errors.push_back(fmt::format("cannot move the child into {}", file.string()));
    }
    const std::string cwd = spec.cwd.empty() ? std::filesystem::current_path().string() : spec.cwd.string();

    arm_sigchld();
    bp::group group;
    c.started = clock_type::now();
    try {
      // pre_exec goes last: it runs after Boost has set up stdin/stdout/stderr in the child.
      bp::child child = spec.stdin_data.empty()
          ? bp::child(bp::exe = exe, bp::args = args, env, bp::start_dir = cwd, bp::std_in < bp::null,
                      bp::std_out > c.out_pipe, bp::std_err > c.err_pipe, group, setup)
          : bp::child(bp::exe = exe, bp::args = args, env, bp::start_dir = cwd, bp::std_in < c.in_pipe,
                      bp::std_out > c.out_pipe, bp::std_err > c.err_pipe, group, setup);
      c.pid = child.id();
      child.detach();  // reaped by handle_sigchld, not by Boost
      group.detach();  // killed by kill_group while the leader's pid is still held
    } catch (const bp::process_error& e) {
      throw process_error(fmt::format("cannot start '{}': {}", exe, e.what()));
    }

    const std::size_t id = children.size();
    children.push_back(std::move(state));
    read_stream(c, c.out_pipe, c.out_buf, c.out_capture, c.out_open);
    read_stream(c, c.err_pipe, c.err_buf, c.err_capture, c.err_open);
    if (!spec.stdin_data.empty()) {
      asio::async_write(c.in_pipe, asio::buffer(c.spec.stdin_data),
                        [&c](const boost::system::error_code&, std::size_t) { c.in_pipe.close(); });
    }
    if (spec.timeout.count() > 0) {
      c.deadline.expires_at(c.started + spec.timeout);
      c.deadline.async_wait([this, &c](const boost::system::error_code& ec) {
        if (ec || c.exited) return;
        c.result.timed_out = true;
        kill_group(c);
      });
    }
    return id;
  }

  template <std::size_t N>
  void read_stream(child_state& c, bp::async_pipe& pipe, std::array<char, N>& buf, output_capture& capture,
                   bool& open) {
    pipe.async_read_some(asio::buffer(buf), [this, &c, &pipe, &buf, &capture, &open](
                                                const boost::system::error_code& ec, std::size_t n) {
      capture.append(std::string_view(buf.data(), n));
      if (ec) {  // EOF, or closed by the drain grace
        boost::system::error_code ignored;
        pipe.close(ignored);
        open = false;
        check_finished(c);
        return;
      }
      read_stream(c, pipe, buf, capture, open);
    });
  }

  void arm_sigchld() {
    if (sigchld_armed) return;
    sigchld_armed = true;
    sigchld.async_wait([this](const boost::system::error_code& ec, int) {
      sigchld_armed = false;
      if (ec) return;
      handle_sigchld();
      for (auto& c : children) {
        if (!c->exited) {
          arm_sigchld();
          break;
        }
      }
    });
  }

  void handle_sigchld() {
    for (auto& cp : children) {
      child_state& c = *cp;
      if (c.exited) continue;
      siginfo_t info{};
      // WNOWAIT: the exited leader stays a zombie, so its pid (= the process group id) cannot
      // be reused before the rest of its group is killed.
      if (::waitid(P_PID, static_cast<id_t>(c.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == 0) {
        continue;  // still running
      }
      // SIGKILL takes effect asynchronously: wait until the group is really gone, so that nothing
      // of the command outlives its result (a GPU lease is released on that result). Waited for
      // while the leader is still an unreaped zombie, so its id cannot name a new group meanwhile.
      if (c.spec.kill_group_on_exit) {
        kill_group(c);
        wait_for_group_exit(c.pid, group_exit_limit);
      }
      int status = 0;
      struct rusage usage{};
      const bool reaped = ::wait4(c.pid, &status, 0, &usage) == c.pid;
      c.exited = true;
      c.result.wall_seconds = std::chrono::duration<double>(clock_type::now() - c.started).count();
      if (reaped) {
        if (WIFEXITED(status)) c.result.exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) c.result.signal = WTERMSIG(status);
        c.result.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                               static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
        c.result.max_rss_kib = usage.ru_maxrss;
      }
      c.deadline.cancel();
      c.grace.expires_after(drain_grace);
      c.grace.async_wait([&c](const boost::system::error_code& ec) {
        if (ec) return;
        boost::system::error_code ignored;
        c.out_pipe.close(ignored);
        c.err_pipe.close(ignored);
      });
      check_finished(c);
    }
  }

  static void kill_group(child_state& c) {
    if (c.pid > 0) ::killpg(c.pid, SIGKILL);
  }

  void check_finished(child_state& c) {
    if (c.finished || !c.exited || c.out_open || c.err_open) return;
    c.finished = true;
    c.grace.cancel();
    boost::system::error_code ignored;
    c.in_pipe.close(ignored);
    c.result.out = c.out_capture.finish();
    c.result.err = c.err_capture.finish();
    for (std::size_t i = 0; i < children.size(); ++i) {
      if (children[i].get() == &c) ready.push_back(i);
    }
  }

  std::optional<std::size_t> wait_any(std::chrono::milliseconds limit) {
    const auto until = clock_type::now() + limit;
    while (ready.empty()) {
      if (returned + ready.size() == children.size()) return std::nullopt;
      if (ioc.stopped()) ioc.restart();
      if (limit.count() > 0) {
        const auto left = until - clock_type::now();
        if (left <= clock_type::duration::zero()) return std::nullopt;
        ioc.run_one_for(left);
      } else {
        ioc.run_one();
      }
    }
    const std::size_t id = ready.front();
    ready.pop_front();
    ++returned;
    return id;
  }
};

process_set::process_set() : impl_(std::make_unique<impl>()) {}

process_set::~process_set() {
  kill_all();
  wait_all();
}

std::size_t process_set::start(const process_spec& spec) { return impl_->start(spec); }

std::optional<std::size_t> process_set::wait_any(std::chrono::milliseconds limit) { return impl_->wait_any(limit); }

void process_set::wait_all() {
  while (impl_->wait_any(std::chrono::milliseconds{0})) {
  }
}

void process_set::kill(std::size_t id) {
  auto& c = *impl_->children.at(id);
  if (c.exited) return;
  if (!c.result.timed_out) c.result.killed = true;
  impl::kill_group(c);
}

void process_set::kill_all() {
  for (std::size_t id = 0; id < impl_->children.size(); ++id) kill(id);
}

std::size_t process_set::size() const { return impl_->children.size(); }

bool process_set::finished(std::size_t id) const { return impl_->children.at(id)->finished; }

int process_set::pid(std::size_t id) const { return impl_->children.at(id)->pid; }

const process_result& process_set::result(std::size_t id) const {
  const auto& c = *impl_->children.at(id);
  if (!c.finished) throw std::logic_error(fmt::format("process {} (pid {}) has not finished yet", id, c.pid));
  return c.result;
}

process_result run_process(const process_spec& spec) {
  process_set set;
  const std::size_t id = set.start(spec);
  set.wait_all();
  return set.result(id);
}

}  // namespace pk::sandbox
