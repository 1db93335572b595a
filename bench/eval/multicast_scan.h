// The judge's refusal of NVLink multicast (NVLS). On a shared host a multicast object or a
// multimem instruction can put the GPUs out of service for everyone, so a candidate that contains
// either gets the verdict `forbidden`. The judge scans, in pkagent's own process (never in the
// candidate's): the candidate's source before anything runs, and after the ranks ran every file
// the run left (the JIT build directories, Triton's cache, anything written to the workspace):
// text and raw bytes for the names (PTX `multimem.*`, the driver's `cuMulticast*`, torch symmetric
// memory's multicast entry points, NVLS switched back on; an ELF's dynamic symbol names are among
// its bytes), and, where a cuobjdump exists, the PTX and SASS of CUDA binaries (fatbins are usually
// compressed, so their PTX is invisible to a byte scan).
//
// Limits: multimem.st/.red assemble to ordinary STG/RED in SASS (the address makes them
// multicast), so a binary without PTX shows them only through the cuMulticast* calls that make
// such an address. The post-run scan finds what a run produced after it ran; the pre-run source
// scan is what keeps plain multicast code off the GPUs.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace pk::bench {

struct multicast_finding {
  std::string file;   ///< the file as the report names it
  std::string what;   ///< "PTX multimem instruction", "CUDA driver multicast API" ...
  std::string match;  ///< the instruction or symbol found, e.g. "multimem.ld_reduce.add.f32"
  std::string where;  ///< "source", "text", "bytes", "ptx" or "sass"
  int line = 0;       ///< line of the match in a source or text file; 0 elsewhere
};

/// Findings in one file's contents (text or raw bytes), at most one per kind.
std::vector<multicast_finding> scan_multicast_bytes(std::string_view data, const std::string& file,
                                                    const std::string& where);

struct multicast_scan_options {
  /// Disassemble CUDA binaries (PTX and SASS) with cuobjdump when one is found.
  bool disassemble = true;
  /// Files larger than this are scanned for names only in their first and last 64 MiB.
  std::uintmax_t full_scan_bytes = 256ull << 20;
  /// Where disassembly results of clean binaries are remembered (by content digest), so a JIT
  /// build reused across evaluations is disassembled once; empty = no memory. Must be a directory
  /// no candidate can write.
  std::filesystem::path clean_cache;
};

/// A file or directory to scan; findings name files as "<label>/<path relative to it>".
struct scan_root {
  std::filesystem::path path;
  std::string label;
};

/// Scans every regular file under `roots` (symlinks are not followed), except the paths in `skip`.
std::vector<multicast_finding> scan_multicast_tree(const std::vector<scan_root>& roots,
                                                   const std::set<std::filesystem::path>& skip,
                                                   const multicast_scan_options& options);

/// The verdict's message: each finding (file, what, match, where) and why multicast is refused.
std::string describe_multicast(const std::vector<multicast_finding>& findings);

/// cuobjdump from PATH, $CUDA_HOME/bin, /usr/local/cuda/bin or the Triton wheel of pkagent's
/// Python; empty when there is none.
std::filesystem::path find_cuobjdump();

}  // namespace pk::bench
