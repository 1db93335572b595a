#include "sandbox/environment.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <string_view>

extern char** environ;

namespace pk::sandbox {

namespace {

constexpr std::array exact_names = {
    "PATH", "LANG", "LANGUAGE", "TERM", "TZ", "COLUMNS", "LINES", "LD_LIBRARY_PATH", "LIBRARY_PATH",
    "TORCH_CUDA_ARCH_LIST", "OMP_NUM_THREADS", "MAX_JOBS", "NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS",
};
constexpr std::array prefixes = {"LC_", "CUDA_", "NCCL_", "NVIDIA_"};
constexpr std::array credential_words = {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"};
// Set by the sandbox itself; a host value must not leak in.
constexpr std::array sandbox_owned = {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "HOME", "TMPDIR"};

bool has_prefix(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

env_map host_environment() {
  env_map env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string_view::npos) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

bool passes_whitelist(const std::string& name) {
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  for (std::string_view word : credential_words) {
    if (upper.find(word) != std::string::npos) return false;
  }
  for (std::string_view owned : sandbox_owned) {
    if (name == owned) return false;
  }
  for (std::string_view exact : exact_names) {
    if (name == exact) return true;
  }
  return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return has_prefix(name, p); });
}

const env_map& forced_environment() {
  static const env_map forced = {
      {"NCCL_NVLS_ENABLE", "0"},
      {"TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"},
      {"NVSHMEM_DISABLE_NVLS", "1"},
  };
  return forced;
}

env_map sandbox_environment(const env_map& host, const std::string& home, const env_map& extra, const env_map& gpu) {
  env_map env;
  for (const auto& [name, value] : host) {
    if (passes_whitelist(name)) env[name] = value;
  }
  std::string& path = env["PATH"];
  if (path.empty()) path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  constexpr std::string_view cuda_bin = "/usr/local/cuda/bin";
  if ((":" + path + ":").find(":" + std::string(cuda_bin) + ":") == std::string::npos &&
      ::access(std::string(cuda_bin).c_str(), X_OK) == 0) {
    path += ":" + std::string(cuda_bin);
  }
  env["HOME"] = home;
  env["TMPDIR"] = "/tmp";
  env["PKAGENT_SANDBOX"] = "1";
  for (const auto& [name, value] : extra) env[name] = value;
  for (const auto& [name, value] : gpu) env[name] = value;
  for (const auto& [name, value] : forced_environment()) env[name] = value;
  return env;
}

}  // namespace pk::sandbox
