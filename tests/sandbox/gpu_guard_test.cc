// The multicast guard on CPU, against a fake CUDA driver (multicast_guard/fake_cuda.c) since no
// multicast path may ever run on a GPU: every route to a cuMulticast* entry point (linked, dlsym,
// dlvsym, cuGetProcAddress and _v2, chains of them, names built at run time, Python ctypes,
// cuda-python, cudart's start-up) is refused with evidence, and ordinary entry points pass
// unchanged; first with LD_PRELOAD as an unsandboxed run gets it, then in a real bwrap GPU
// sandbox, where it also holds for children started with an empty environment. Each guarded run
// has an unguarded control showing the same routes do reach the driver without the guard.
#include "sandbox/gpu_guard.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "sandbox/plan.h"
#include "sandbox/process.h"
#include "sandbox/sandbox.h"
#include "temp_dir.h"

namespace pk::sandbox {
namespace {

namespace fs = std::filesystem;
using testing::temp_dir;
using namespace std::chrono_literals;

const fs::path probe = GUARD_PROBE;
const fs::path fake_driver = FAKE_LIBCUDA;
const fs::path fake_injection = FAKE_INJECTION;
const fs::path probe_libraries = PROBE_LIBRARIES;  // the probe's libguard_next_a.so and _b.so
const fs::path routes_py = fs::path(PKAGENT_TEST_DATA) / "multicast_guard" / "guard_routes.py";
const std::set<std::string> multicast_entries = {
    "cuMulticastCreate",   "cuMulticastAddDevice",   "cuMulticastBindMem", "cuMulticastBindMem_v2",
    "cuMulticastBindAddr", "cuMulticastBindAddr_v2", "cuMulticastUnbind",  "cuMulticastGetGranularity",
    "cuMulticast*"};

std::string python() { return PKAGENT_PYTHON[0] ? PKAGENT_PYTHON : "python3"; }

process_result run_with(const std::vector<std::string>& argv, const env_map& env) {
  process_spec ps;
  ps.argv = argv;
  ps.env = env;
  ps.timeout = 300s;
  return run_process(ps);
}

env_map plain_env() { return {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"HOME", "/tmp"}}; }

env_map guarded_env(const fs::path& log) {
  env_map env = plain_env();
  for (const auto& [k, v] : gpu_guard_env(log)) env[k] = v;
  return env;
}

// "pid N" as the probe or the script printed it (inside a sandbox: its pid there).
long printed_pid(const std::string& out) {
  const auto at = out.rfind("pid ");
  return at == std::string::npos ? -1 : std::stol(out.substr(at + 4));
}

std::set<std::string> refused_entries(const guard_log& log, long pid) {
  std::set<std::string> out;
  for (const auto& e : log.refusals()) {
    if (e.pid == pid) out.insert(e.entry);
  }
  return out;
}

bool has_event(const guard_log& log, const std::string& event, const std::string& entry, const std::string& route) {
  for (const auto& e : log.events) {
    if (e.event == event && e.entry == entry && e.route == route) return true;
  }
  return false;
}

TEST(multicast_guard, without_the_guard_every_route_reaches_the_driver) {
  const auto r = run_with({probe.string(), "unguarded"}, plain_env());
  EXPECT_EQ(r.exit_code, 0) << r.out.text << r.err.text;
  EXPECT_EQ(r.out.text.find("FAIL"), std::string::npos) << r.out.text;
}

TEST(multicast_guard, ld_preload_refuses_every_route_and_passes_the_rest) {
  temp_dir dir;
  const fs::path log = dir.path() / "guard.log";
  const auto r = run_with({probe.string(), "guarded"}, guarded_env(log));
  ASSERT_EQ(r.exit_code, 0) << r.out.text << r.err.text;
  EXPECT_EQ(r.out.text.find("FAIL"), std::string::npos) << r.out.text;
  EXPECT_NE(r.err.text.find("pkagent: cuMulticastCreate refused: NVLink multicast is forbidden"), std::string::npos)
      << r.err.text;

  const guard_log evidence = read_guard_log(log);
  EXPECT_EQ(evidence.problem, "");
  EXPECT_EQ(evidence.ignored_lines, 0u);
  EXPECT_EQ(refused_entries(evidence, printed_pid(r.out.text)), multicast_entries);
  for (const char* route : {"dlsym", "dlvsym", "cuGetProcAddress", "cuGetProcAddress_v2"}) {
    EXPECT_TRUE(has_event(evidence, "resolved", "cuMulticastCreate", route)) << route;
  }
  EXPECT_TRUE(has_event(evidence, "masked", "CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED", "cuDeviceGetAttribute"));
  EXPECT_NE(describe_refusals(evidence.refusals()).find("cuMulticastCreate refused in pid "), std::string::npos);
}

// Nsight Compute puts a library in front of the driver that exports cuGetProcAddress(_v2) and
// cuDeviceGetAttribute and forwards each call to what its own lookup found: the guard's wrapper.
// The guard calls it once and, called back, goes to the driver itself; every route stays refused.
TEST(multicast_guard, an_injection_between_process_and_driver_neither_recurses_nor_opens_a_route) {
  const auto control = run_with({probe.string(), "unguarded", "--injection", fake_injection.string()}, plain_env());
  EXPECT_EQ(control.exit_code, 0) << control.out.text << control.err.text;
  EXPECT_NE(control.out.text.find("ok injection calls through it"), std::string::npos) << control.out.text;

  temp_dir dir;
  const fs::path log = dir.path() / "guard.log";
  const auto r = run_with({probe.string(), "guarded", "--injection", fake_injection.string()}, guarded_env(log));
  ASSERT_EQ(r.exit_code, 0) << r.out.text << r.err.text;
  EXPECT_EQ(r.out.text.find("FAIL"), std::string::npos) << r.out.text;
  EXPECT_NE(r.out.text.find("ok injection calls through it"), std::string::npos) << r.out.text;
  const guard_log evidence = read_guard_log(log);
  EXPECT_EQ(refused_entries(evidence, printed_pid(r.out.text)), multicast_entries);
  EXPECT_TRUE(has_event(evidence, "resolved", "cuMulticastCreate", "cuGetProcAddress_v2"));
  EXPECT_TRUE(has_event(evidence, "masked", "CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED", "cuDeviceGetAttribute"));
}

TEST(multicast_guard, python_ctypes_cuda_python_and_cudart_are_refused_under_ld_preload) {
  temp_dir dir;
  const fs::path log = dir.path() / "guard.log";
  const auto control = run_with({python(), routes_py.string(), fake_driver.string(), "unguarded"}, plain_env());
  EXPECT_EQ(control.exit_code, 0) << control.out.text << control.err.text;

  const auto r = run_with({python(), routes_py.string(), fake_driver.string(), "guarded"}, guarded_env(log));
  ASSERT_EQ(r.exit_code, 0) << r.out.text << r.err.text;
  const guard_log evidence = read_guard_log(log);
  const auto refused = refused_entries(evidence, printed_pid(r.out.text));
  for (const char* entry : {"cuMulticastCreate", "cuMulticastBindMem", "cuMulticastGetGranularity", "cuMulticastAddDevice"}) {
    EXPECT_TRUE(refused.count(entry)) << entry << "\n" << r.out.text;
  }
  if (r.out.text.find("cudart started") != std::string::npos) {
    // cudart fetches the driver's cuGetProcAddress_v2 with dlsym, then everything through it.
    EXPECT_TRUE(has_event(evidence, "resolved", "cuGetProcAddress_v2", "dlsym"));
    EXPECT_TRUE(has_event(evidence, "resolved", "cuGetProcAddress", "cuGetProcAddress_v2"));
  }
}

class multicast_guard_sandbox : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = unavailable_reason()) GTEST_SKIP() << "no sandbox on this host: " << *why;
    host = host_facts::current();
    // A fake GPU (a plain file as its device node): the guard is part of every GPU sandbox.
    host.gpu_paths = {fake_gpu.path() / "dev", fake_gpu.path() / "gpus"};
    fs::create_directories(host.gpu_paths.dev);
    fs::create_directories(host.gpu_paths.driver_gpus / "0000:07:00.0");
    std::ofstream(host.gpu_paths.driver_gpus / "0000:07:00.0" / "information") << "Device Minor: 0\n";
    std::ofstream(host.gpu_paths.dev / "nvidia0");
    std::ofstream(host.gpu_paths.dev / "nvidiactl");
    s.workspace = ws.path();
    s.gpus = {0};
    log = logs.path() / "guard.log";
    // The build's files, visible inside wherever the checkout is (the sandbox hides /tmp and $HOME).
    s.binds = {guard_log_bind(log), {probe.parent_path(), probe.parent_path(), false},
               {probe_libraries, probe_libraries, false}, {fake_driver.parent_path(), fake_driver.parent_path(), false},
               {routes_py.parent_path(), routes_py.parent_path(), false}};
    // The venv, and the interpreter it links to, may live under $HOME, which the sandbox hides.
    const fs::path py = python();
    if (py.is_absolute()) {
      for (const fs::path& p : {py, fs::canonical(py)}) {
        s.binds.push_back({p.parent_path().parent_path(), p.parent_path().parent_path(), false});
      }
    }
  }

  result run_sandboxed(const std::string& command) { return execute(s, make_plan(s, command, host)); }

  temp_dir ws, fake_gpu, logs;
  host_facts host;
  spec s;
  fs::path log;
};

TEST_F(multicast_guard_sandbox, holds_in_children_started_with_an_empty_environment) {
  // A variable naming another log does not take the evidence away from the sandbox's.
  const auto r = run_sandboxed("PKAGENT_MULTICAST_GUARD_LOG=/tmp/elsewhere " + probe.string() +
                               " guarded --child-with-empty-environment");
  ASSERT_EQ(r.exit_code, 0) << r.out.text << r.err.text;
  EXPECT_EQ(r.out.text.find("FAIL"), std::string::npos) << r.out.text;
  EXPECT_NE(r.out.text.find("ok child-with-empty-environment"), std::string::npos) << r.out.text;
  const guard_log evidence = read_guard_log(log);
  EXPECT_EQ(evidence.problem, "");
  std::set<long> pids;
  for (const auto& e : evidence.refusals()) pids.insert(e.pid);
  EXPECT_EQ(pids.size(), 2u) << "the probe and its child both left evidence";
  EXPECT_EQ(refused_entries(evidence, printed_pid(r.out.text)), multicast_entries);
}

TEST_F(multicast_guard_sandbox, python_children_with_env_cleared_and_torch_work_under_it) {
  const auto r = run_sandboxed(python() + " " + routes_py.string() + " " + fake_driver.string() +
                               " guarded --child-with-empty-environment --torch");
  ASSERT_EQ(r.exit_code, 0) << r.out.text << r.err.text;
  EXPECT_NE(r.out.text.find("ok python child with env={}"), std::string::npos) << r.out.text;
  if (r.out.text.find("skip torch") == std::string::npos) {
    EXPECT_NE(r.out.text.find("ok torch on CPU under the guard"), std::string::npos) << r.out.text;
  }
  EXPECT_FALSE(read_guard_log(log).refusals().empty());
}

TEST_F(multicast_guard_sandbox, nothing_inside_can_remove_it_and_etc_reads_as_on_the_host) {
  const auto r = run_sandboxed(
      "cat /etc/ld.so.preload; echo > /etc/ld.so.preload; echo rc=$?; rm -f /.pkagent/libpk_multicast_guard.so; "
      "echo rc=$?; mv /.pkagent /.moved; echo rc=$?; head -c 5 /etc/passwd; echo; ls -A /etc | wc -l");
  EXPECT_EQ(r.exit_code, 0) << r.err.text;
  std::ifstream passwd("/etc/passwd");
  std::string head(5, '\0');
  passwd.read(head.data(), 5);
  std::size_t host_entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/etc")) ++host_entries;
  const std::size_t inside_entries = host_entries + (fs::exists("/etc/ld.so.preload") ? 0 : 1);
  EXPECT_EQ(r.out.text, "/.pkagent/libpk_multicast_guard.so\nrc=1\nrc=1\nrc=1\n" + head + "\n" +
                            std::to_string(inside_entries) + "\n")
      << r.err.text;
}

// The plan as data: a GPU sandbox gets the guard through a rebuilt /etc; no other does.
class multicast_guard_plan : public ::testing::Test {
 protected:
  multicast_guard_plan() {
    host.bwrap = "/usr/bin/bwrap";
    host.environment = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/home/alice"}};
    host.gpu_paths = {root.path() / "dev", root.path() / "gpus"};
    fs::create_directories(host.gpu_paths.driver_gpus / "0000:07:00.0");
    std::ofstream(host.gpu_paths.driver_gpus / "0000:07:00.0" / "information") << "Device Minor: 0\n";
    // A fake host root: /etc with a file, a relative link and the host's own ld.so.preload.
    host.root = root.path();
    fs::create_directories(root.path() / "etc");
    fs::create_directories(root.path() / "usr" / "lib");
    std::ofstream(root.path() / "etc" / "passwd") << "root:x:0:0::/root:/bin/sh\n";
    fs::create_symlink("../usr/lib/os-release", root.path() / "etc" / "os-release");
    std::ofstream(root.path() / "etc" / "ld.so.preload") << "/opt/host.so\n";
    host.multicast_guard = root.path() / "libguard.so";
    std::ofstream(host.multicast_guard) << "";
    s.workspace = ws.path();
  }
  temp_dir ws, root;
  host_facts host;
  spec s;
};

TEST_F(multicast_guard_plan, a_gpu_sandbox_preloads_the_guard_through_its_own_etc) {
  s.gpus = {0};
  const plan p = make_plan(s, "true", host);
  using strings = std::vector<std::string>;
  auto at = [&](const strings& needle) {
    return std::search(p.argv.begin(), p.argv.end(), needle.begin(), needle.end()) - p.argv.begin();
  };
  const auto end = static_cast<std::ptrdiff_t>(p.argv.size());
  const fs::path etc = root.path() / "etc";
  EXPECT_LT(at({"--ro-bind", etc.string(), "/.host-etc"}), end);
  EXPECT_LT(at({"--dir", "/etc"}), end);
  EXPECT_LT(at({"--symlink", "/.host-etc/passwd", "/etc/passwd"}), end);
  EXPECT_LT(at({"--symlink", "../usr/lib/os-release", "/etc/os-release"}), end) << "host links are copied as they are";
  EXPECT_EQ(at({"--ro-bind", etc.string(), "/etc"}), end) << "the host's /etc is not /etc";
  EXPECT_EQ(at({"--symlink", "/.host-etc/ld.so.preload", "/etc/ld.so.preload"}), end);
  const auto list = at({"--perms", "0444", "--ro-bind-data", std::to_string(ld_so_preload_fd), "/etc/ld.so.preload"});
  const auto library = at({"--ro-bind", host.multicast_guard.string(), "/.pkagent/libguard.so"});
  EXPECT_LT(list, end);
  EXPECT_LT(library, end);
  // Made before the root is sealed, so nothing inside can move or replace them.
  EXPECT_LT(list, at({"--remount-ro", "/"}));
  EXPECT_LT(library, at({"--remount-ro", "/"}));
  std::string preload_list;
  for (const auto& [fd, data] : p.fd_data) {
    if (fd == ld_so_preload_fd) preload_list = data;
  }
  EXPECT_EQ(preload_list, "/.pkagent/libguard.so\n/opt/host.so\n") << "the guard first, then the host's own";
}

TEST_F(multicast_guard_plan, a_sandbox_without_gpus_keeps_the_hosts_etc) {
  const plan p = make_plan(s, "true", host);
  const std::vector<std::string> host_etc = {"--ro-bind", (root.path() / "etc").string(), "/etc"};
  EXPECT_NE(std::search(p.argv.begin(), p.argv.end(), host_etc.begin(), host_etc.end()), p.argv.end());
  for (const auto& arg : p.argv) EXPECT_EQ(arg.find("ld.so.preload"), std::string::npos) << arg;
  for (const auto& [fd, data] : p.fd_data) EXPECT_NE(fd, ld_so_preload_fd);
}

TEST_F(multicast_guard_plan, a_sandbox_without_gpus_gets_it_when_asked) {
  s.multicast_guard = true;  // the judge's process sets on CPU
  plan p = make_plan(s, "true", host);
  std::string preload_list;
  for (const auto& [fd, data] : p.fd_data)
    if (fd == ld_so_preload_fd) preload_list = data;
  EXPECT_EQ(preload_list, "/.pkagent/libguard.so\n/opt/host.so\n");
  s.isolation = isolation::none;
  EXPECT_EQ(make_plan(s, "true", host).env.at("LD_PRELOAD"), host.multicast_guard.string());
}

TEST_F(multicast_guard_plan, no_gpu_is_lent_without_the_guard) {
  s.gpus = {0};
  host.multicast_guard = root.path() / "absent.so";
  try {
    make_plan(s, "true", host);
    FAIL() << "planned a GPU sandbox without its guard";
  } catch (const sandbox_error& e) {
    EXPECT_NE(std::string(e.what()).find("--target pk_multicast_guard"), std::string::npos) << e.what();
  }
  s.isolation = isolation::none;
  EXPECT_THROW(make_plan(s, "true", host), sandbox_error);
}

TEST_F(multicast_guard_plan, an_unsandboxed_gpu_command_gets_it_through_ld_preload) {
  s.gpus = {0};
  s.isolation = isolation::none;
  const plan p = make_plan(s, "true", host);
  EXPECT_EQ(p.env.at("LD_PRELOAD"), host.multicast_guard.string());
  s.gpus = {};
  EXPECT_EQ(make_plan(s, "true", host).env.count("LD_PRELOAD"), 0u);
}

TEST(guard_log, reads_the_guards_lines_and_ignores_anything_else) {
  temp_dir dir;
  const fs::path file = dir.path() / "log";
  std::ofstream(file) << "resolved cuMulticastCreate route=dlsym pid=7 comm=python\n"
                         "refused cuMulticastCreate route=call pid=7 comm=python\n"
                         "refused cuMulticastCreate route=call pid=x comm=python\n"
                         "garbage\n\n"
                         "refused cuMulticastUnbind route=call pid=8 comm=a extra\n"
                         "masked CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED route=cuDeviceGetAttribute pid=9 comm=b\n";
  const guard_log log = read_guard_log(file);
  EXPECT_EQ(log.problem, "");
  ASSERT_EQ(log.events.size(), 3u);
  EXPECT_EQ(log.ignored_lines, 3u);
  ASSERT_EQ(log.refusals().size(), 1u);
  EXPECT_EQ(log.refusals()[0].pid, 7);
  EXPECT_EQ(log.refusals()[0].comm, "python");
  EXPECT_EQ(describe_refusals(log.refusals()), "cuMulticastCreate refused in pid 7 (python)\n");
  EXPECT_TRUE(read_guard_log(file, 20).truncated);
}

TEST(guard_log, refuses_links_fifos_and_missing_files) {
  temp_dir dir;
  std::ofstream(dir.path() / "real") << "refused cuMulticastCreate route=call pid=7 comm=python\n";
  fs::create_symlink(dir.path() / "real", dir.path() / "link");
  ASSERT_EQ(::mkfifo((dir.path() / "fifo").c_str(), 0600), 0);
  for (const char* name : {"link", "fifo", "absent"}) {
    const guard_log log = read_guard_log(dir.path() / name);
    EXPECT_NE(log.problem, "") << name;
    EXPECT_TRUE(log.events.empty()) << name;
  }
}

TEST(gpu_guard_env, puts_the_guard_first_and_multicast_off) {
  const env_map env = gpu_guard_env("/tmp/x.log", "/opt/other.so");
  EXPECT_EQ(env.at("LD_PRELOAD"), multicast_guard_library().string() + ":/opt/other.so");
  EXPECT_EQ(env.at("PKAGENT_MULTICAST_GUARD_LOG"), "/tmp/x.log");
  EXPECT_EQ(env.at("NCCL_NVLS_ENABLE"), "0");
  EXPECT_EQ(env.at("TORCH_SYMM_MEM_DISABLE_MULTICAST"), "1");
  EXPECT_EQ(env.at("NVSHMEM_DISABLE_NVLS"), "1");
  EXPECT_EQ(gpu_guard_env({}).count("PKAGENT_MULTICAST_GUARD_LOG"), 0u);
}

}  // namespace
}  // namespace pk::sandbox
