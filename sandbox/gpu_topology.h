// How the host's GPUs are joined, as the driver reports it (`nvidia-smi topo -m`): for each pair of
// GPUs the link between them ("NV18": a bond of 18 NVLinks; "SYS", "NODE", "PHB", "PXB", "PIX": PCIe
// paths of decreasing length). The prompt's machine section names the links of the GPUs an episode
// leases from this.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace pk::sandbox {

/// The GPU-to-GPU part of `nvidia-smi topo -m`.
struct gpu_topology {
  int gpu_count = 0;                                 ///< GPU rows found (GPU0 .. GPU<n-1>)
  std::map<std::pair<int, int>, std::string> links;  ///< {a, b} with a < b -> the matrix cell, e.g. "NV18"
};

/// Parses the text of `nvidia-smi topo -m`: the header row's GPU<i> columns, then each GPU<i> row's cells
/// in those columns; NIC rows and columns, affinities and the legend are left out, and terminal escape
/// sequences (the header's underline) are ignored. Text without a GPU matrix gives gpu_count 0.
gpu_topology parse_gpu_topology(const std::string& text);

/// Runs `nvidia-smi topo -m` and parses it; gpu_count 0 when nvidia-smi is missing or fails.
gpu_topology read_gpu_topology();

/// The links among `gpus` (host indices) in words: "" for fewer than two GPUs; "NV18" when every pair has
/// that link; else each distinct link with its pairs ("NV18 (0-1), SYS (0-2, 1-2)"). A pair the matrix
/// lacks counts as "unknown".
std::string describe_links(const gpu_topology& topology, const std::vector<int>& gpus);

}  // namespace pk::sandbox
