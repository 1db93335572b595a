// The GPUs of this host, as the scheduler numbers them.
#pragma once

#include <filesystem>
#include <vector>

namespace pk::scheduler {

/// Indices N of the /dev/nvidiaN device nodes under `dev`, ascending (the numbering the sandbox
/// uses to bind a GPU into a rank's sandbox); empty on a host without NVIDIA GPUs.
std::vector<int> detect_host_gpus(const std::filesystem::path& dev = "/dev");

}  // namespace pk::scheduler
