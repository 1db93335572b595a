// make_plan as data: the bwrap argv, environment, GPU binding and limits a spec turns into.
#include "sandbox/plan.h"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>

#include <gtest/gtest.h>

#include "sandbox/seccomp_filter.h"
#include "temp_dir.h"

namespace pk::sandbox {
namespace {

// The process's working directory moved to `dir` for as long as it lives, whatever is thrown.
class in_directory {
 public:
  explicit in_directory(const std::filesystem::path& dir) : back_(std::filesystem::current_path()) {
    std::filesystem::current_path(dir);
  }
  ~in_directory() { std::filesystem::current_path(back_); }
  in_directory(const in_directory&) = delete;
  in_directory& operator=(const in_directory&) = delete;

 private:
  std::filesystem::path back_;
};

using testing::temp_dir;
using strings = std::vector<std::string>;

// True when `needle` occurs in `argv` as consecutive arguments.
bool has_sequence(const strings& argv, const strings& needle) {
  return std::search(argv.begin(), argv.end(), needle.begin(), needle.end()) != argv.end();
}

std::ptrdiff_t position(const strings& argv, const strings& needle) {
  return std::search(argv.begin(), argv.end(), needle.begin(), needle.end()) - argv.begin();
}

class sandbox_plan_test : public ::testing::Test {
 protected:
  sandbox_plan_test() {
    host.environment = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/home/alice"}, {"LANG", "C.UTF-8"},
                        {"OPENAI_API_KEY", "sk-secret"}, {"CUDA_HOME", "/usr/local/cuda"},
                        {"NCCL_DEBUG", "INFO"}, {"NCCL_NVLS_ENABLE", "1"}, {"AWS_SECRET_ACCESS_KEY", "x"},
                        {"CUDA_VISIBLE_DEVICES", "3"}, {"RANDOM_HOST_VAR", "y"}, {"HF_TOKEN", "z"}};
    host.bwrap = "/usr/bin/bwrap";
    host.gpu_paths = {fake.path() / "dev", fake.path() / "gpus"};
    std::filesystem::create_directories(host.gpu_paths.dev);
    s.workspace = ws.path();
  }

  // A fake driver tree: GPUs at PCI buses 07 and 05 whose minors are swapped against PCI order.
  void add_fake_gpus() {
    const std::pair<const char*, int> gpus[] = {{"0000:07:00.0", 0}, {"0000:05:00.0", 1}};
    for (auto [bus, minor] : gpus) {
      std::filesystem::create_directories(host.gpu_paths.driver_gpus / bus);
      std::ofstream(host.gpu_paths.driver_gpus / bus / "information") << "Model: H200\nDevice Minor: " << minor << "\n";
      std::ofstream(host.gpu_paths.dev / ("nvidia" + std::to_string(minor)));
    }
    for (const char* node : {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"}) std::ofstream(host.gpu_paths.dev / node);
    std::filesystem::create_directories(host.gpu_paths.dev / "nvidia-caps");
  }

  temp_dir ws, fake;
  host_facts host;
  spec s;
};

TEST_F(sandbox_plan_test, isolates_everything_and_runs_a_login_shell_in_the_workspace) {
  const plan p = make_plan(s, "echo hi", host);
  ASSERT_GE(p.argv.size(), 4u);
  EXPECT_EQ(p.argv.front(), "/usr/bin/bwrap");
  EXPECT_EQ(strings(p.argv.end() - 4, p.argv.end()), (strings{"--", "bash", "-lc", "echo hi"}));
  for (const char* flag : {"--unshare-all", "--die-with-parent", "--new-session"}) {
    EXPECT_TRUE(has_sequence(p.argv, {flag})) << flag;
  }
  EXPECT_TRUE(has_sequence(p.argv, {"--cap-drop", "ALL"}));
  EXPECT_TRUE(has_sequence(p.argv, {"--bind", ws.path().string(), "/workspace"}));
  EXPECT_TRUE(has_sequence(p.argv, {"--chdir", "/workspace"}));
  EXPECT_TRUE(has_sequence(p.argv, {"--ro-bind", "/usr", "/usr"}));
  EXPECT_TRUE(has_sequence(p.argv, {"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run"}));
  EXPECT_TRUE(has_sequence(p.argv, {"--tmpfs", "/root"}));
  EXPECT_TRUE(has_sequence(p.argv, {"--tmpfs", "/home/alice"}));
  EXPECT_TRUE(has_sequence(p.argv, {"--seccomp", std::to_string(seccomp_fd)}));
  EXPECT_FALSE(has_sequence(p.argv, {"--ro-bind", "/tmp", "/tmp"})) << "host /tmp must not be visible";
  // The root is made read-only only after /workspace was created on it.
  EXPECT_LT(position(p.argv, {"--bind", ws.path().string(), "/workspace"}), position(p.argv, {"--remount-ro", "/"}));
  EXPECT_EQ(p.cwd, ws.path());
  EXPECT_TRUE(p.warnings.empty());
}

TEST_F(sandbox_plan_test, an_argv_is_execd_as_given_with_no_shell) {
  const strings argv = {"cat", "a file with spaces", "it's"};
  const plan p = make_argv_plan(s, argv, host);
  ASSERT_GE(p.argv.size(), 4u);
  EXPECT_EQ(strings(p.argv.end() - 4, p.argv.end()), (strings{"--", "cat", "a file with spaces", "it's"}));
  EXPECT_EQ(p.argv, [&] {  // the same isolation as for a shell line: only the tail differs
    strings same = make_plan(s, "x", host).argv;
    same.erase(same.end() - 3, same.end());
    same.insert(same.end(), argv.begin(), argv.end());
    return same;
  }());
  s.isolation = isolation::none;
  EXPECT_EQ(make_argv_plan(s, argv, host).argv, argv);
  EXPECT_EQ(make_plan(s, "echo hi", host).argv, (strings{"bash", "-c", "echo hi"}));
  EXPECT_THROW(make_argv_plan(s, {}, host), std::invalid_argument);
}

TEST_F(sandbox_plan_test, hands_bwrap_the_seccomp_program_and_a_profile_that_restores_path) {
  const plan p = make_plan(s, "true", host);
  ASSERT_EQ(p.fd_data.size(), 2u);
  EXPECT_TRUE(has_sequence(p.argv, {"--file", std::to_string(profile_fd), "/home/alice/.bash_profile"}));
  for (const auto& [fd, data] : p.fd_data) {
    if (fd == seccomp_fd) {
      EXPECT_EQ(data, seccomp_program({}));
    } else {
      EXPECT_EQ(data, "PATH='" + p.env.at("PATH") + "'\nexport PATH\n");
    }
  }
}

TEST_F(sandbox_plan_test, environment_is_a_whitelist_with_multicast_forced_off) {
  s.env = {{"MY_VAR", "1"}, {"NCCL_NVLS_ENABLE", "1"}};
  const plan p = make_plan(s, "env", host);
  for (const char* hidden : {"OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "RANDOM_HOST_VAR", "HF_TOKEN"}) {
    EXPECT_EQ(p.env.count(hidden), 0u) << hidden;
  }
  EXPECT_EQ(p.env.at("LANG"), "C.UTF-8");
  EXPECT_EQ(p.env.at("CUDA_HOME"), "/usr/local/cuda");
  EXPECT_EQ(p.env.at("NCCL_DEBUG"), "INFO");
  EXPECT_EQ(p.env.at("MY_VAR"), "1");
  EXPECT_EQ(p.env.at("HOME"), "/home/alice");
  EXPECT_EQ(p.env.at("TMPDIR"), "/tmp");
  EXPECT_EQ(p.env.at("NCCL_NVLS_ENABLE"), "0") << "neither the host nor the spec may turn NVLS on";
  EXPECT_EQ(p.env.at("TORCH_SYMM_MEM_DISABLE_MULTICAST"), "1");
  EXPECT_EQ(p.env.at("NVSHMEM_DISABLE_NVLS"), "1");
  EXPECT_EQ(p.env.count("CUDA_VISIBLE_DEVICES"), 0u) << "the host's value must not leak in";
}

TEST_F(sandbox_plan_test, no_gpu_device_is_bound_without_gpus) {
  add_fake_gpus();
  const plan p = make_plan(s, "true", host);
  for (const auto& arg : p.argv) EXPECT_EQ(arg.find("nvidia"), std::string::npos) << arg;
}

TEST_F(sandbox_plan_test, binds_only_the_listed_gpu_by_its_driver_minor_and_renumbers_it) {
  add_fake_gpus();
  s.gpus = {1};  // host index 1 = second in PCI order = bus 07 = minor 0
  const plan p = make_plan(s, "true", host);
  const std::string dev = host.gpu_paths.dev.string();
  EXPECT_TRUE(has_sequence(p.argv, {"--dev-bind", dev + "/nvidia0", dev + "/nvidia0"}));
  EXPECT_FALSE(has_sequence(p.argv, {"--dev-bind", dev + "/nvidia1", dev + "/nvidia1"}));
  for (const char* node : {"/nvidiactl", "/nvidia-uvm", "/nvidia-uvm-tools", "/nvidia-caps"}) {
    EXPECT_TRUE(has_sequence(p.argv, {"--dev-bind", dev + node, dev + node})) << node;
  }
  EXPECT_FALSE(has_sequence(p.argv, {"--dev-bind", dev + "/nvidia-modeset", dev + "/nvidia-modeset"}))
      << "absent nodes are not bound";
  EXPECT_EQ(p.env.at("CUDA_VISIBLE_DEVICES"), "0") << "inside, the one bound GPU is device 0";
  EXPECT_EQ(p.env.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
}

TEST_F(sandbox_plan_test, keeps_the_callers_gpu_order_inside) {
  add_fake_gpus();
  s.gpus = {1, 0};
  EXPECT_EQ(make_plan(s, "true", host).env.at("CUDA_VISIBLE_DEVICES"), "1,0");
  s.gpus = {0, 1};
  EXPECT_EQ(make_plan(s, "true", host).env.at("CUDA_VISIBLE_DEVICES"), "0,1");
}

TEST_F(sandbox_plan_test, refuses_gpus_the_host_does_not_have) {
  add_fake_gpus();
  s.gpus = {2};
  try {
    make_plan(s, "true", host);
    FAIL() << "GPU 2 accepted";
  } catch (const sandbox_error& e) {
    EXPECT_STREQ(e.what(), "GPU 2 was requested, but this host has GPUs 0,1; pick from those");
  }
  s.gpus = {0, 0};
  EXPECT_THROW(make_plan(s, "true", host), sandbox_error);
}

TEST_F(sandbox_plan_test, without_a_network_namespace_seccomp_refuses_ip_sockets) {
  host.network_namespace = false;
  const plan p = make_plan(s, "true", host);
  EXPECT_FALSE(has_sequence(p.argv, {"--unshare-all"}));
  EXPECT_TRUE(has_sequence(p.argv, {"--unshare-pid"}));
  for (const auto& [fd, data] : p.fd_data) {
    if (fd == seccomp_fd) {
      EXPECT_EQ(data, seccomp_program({.block_inet = true}));
    }
  }
  EXPECT_NE(seccomp_program({.block_inet = true}), seccomp_program({}));
}

TEST_F(sandbox_plan_test, limits_become_rlimits_and_nproc_only_without_a_pids_cgroup) {
  s.limits.cpu_seconds = 10;
  s.limits.file_size_bytes = 1 << 20;
  s.limits.open_files = 256;
  s.limits.processes = 100;
  s.limits.tmp_bytes = 64 << 20;
  auto resources = [](const plan& p) {
    std::vector<std::pair<int, std::uint64_t>> out;
    for (const auto& r : p.rlimits) out.emplace_back(r.resource, r.value);
    return out;
  };
  host.pids_cgroup = true;
  const plan p = make_plan(s, "true", host);
  EXPECT_EQ(resources(p), (std::vector<std::pair<int, std::uint64_t>>{
                              {RLIMIT_CPU, 10}, {RLIMIT_FSIZE, 1 << 20}, {RLIMIT_NOFILE, 256}}));
  EXPECT_TRUE(has_sequence(p.argv, {"--size", std::to_string(64 << 20), "--tmpfs", "/tmp"}));
  host.pids_cgroup = false;
  EXPECT_EQ(resources(make_plan(s, "true", host)).back(), (std::pair<int, std::uint64_t>{RLIMIT_NPROC, 100}));
}

TEST_F(sandbox_plan_test, missing_bwrap_names_the_fix) {
  host.bwrap.clear();
  try {
    make_plan(s, "true", host);
    FAIL() << "planned without bwrap";
  } catch (const sandbox_error& e) {
    EXPECT_NE(std::string(e.what()).find("apt-get install bubblewrap"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--sandbox=none"), std::string::npos) << e.what();
  }
}

TEST_F(sandbox_plan_test, missing_workspace_or_bind_source_is_refused) {
  s.workspace = ws.path() / "absent";
  EXPECT_THROW(make_plan(s, "true", host), sandbox_error);
  s.workspace = ws.path();
  s.binds = {{ws.path() / "no-such-file", "/pkb.sock", false}};
  EXPECT_THROW(make_plan(s, "true", host), sandbox_error);
}

TEST_F(sandbox_plan_test, a_relative_bind_source_reaches_bwrap_absolute) {
  // bwrap resolves sources after leaving the caller's directory: `pkagent run --out run` binds
  // run/episodes/.../pkb, which it would not find.
  std::filesystem::create_directories(ws.path() / "pkb");
  plan p;
  {
    const in_directory here(ws.path());
    s.binds = {{"pkb", "/pkb", true}};
    p = make_plan(s, "true", host);
  }
  EXPECT_TRUE(has_sequence(p.argv, {"--bind", (ws.path() / "pkb").string(), "/pkb"}));
}

TEST_F(sandbox_plan_test, sandbox_none_runs_bash_directly_and_warns) {
  s.isolation = isolation::none;
  s.gpus = {1};
  const plan p = make_plan(s, "nvidia-smi", host);
  EXPECT_EQ(p.argv, (strings{"bash", "-c", "nvidia-smi"}));
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("UNSANDBOXED"), std::string::npos);
  EXPECT_EQ(p.env.at("CUDA_VISIBLE_DEVICES"), "1") << "unsandboxed, host numbering applies";
  EXPECT_EQ(p.env.count("OPENAI_API_KEY"), 0u);
}

}  // namespace
}  // namespace pk::sandbox
