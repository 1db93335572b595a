// The sandbox's environment: a whitelist of the host's variables, never the host's whole
// environment, so API keys and tokens given to pkagent stay outside.
#pragma once

#include <map>
#include <string>

namespace pk::sandbox {

using env_map = std::map<std::string, std::string>;

/// pkagent's own environment (environ), as a map.
env_map host_environment();

/// True for a host variable the sandbox may see: PATH, locale and terminal settings, CUDA_*,
/// NCCL_*, LD_LIBRARY_PATH and the like; never a name that looks like a credential (*KEY*,
/// *TOKEN*, *SECRET*, *PASSWORD*, *CREDENTIAL*), whatever its prefix.
bool passes_whitelist(const std::string& name);

/// Variables forced in every sandbox, after everything else: NVLink multicast off
/// (NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1).
const env_map& forced_environment();

/// The environment of a sandboxed command: the whitelisted host variables, a PATH that
/// reaches /usr/local/cuda/bin when CUDA is installed, HOME and TMPDIR, then `extra` (the
/// spec's own variables), then `gpu` (CUDA_VISIBLE_DEVICES ...), then forced_environment().
env_map sandbox_environment(const env_map& host, const std::string& home, const env_map& extra, const env_map& gpu);

}  // namespace pk::sandbox
