// Commitments of timed calls. The candidate's rank runs its timed blocks in its own process, where
// it could skip the calls and compute a call only when the judge asks to record it (after the
// block, once the judge has named the call it checks). So after every timed block the judge asks
// each set to commit to every call's output tensors, and times that command as well: outputs that
// did not exist when the block ended must be computed then, which the judge's clock sees
// (timing_plan.h). When the judge later records a checked call, the output in the recorded file
// must be the one committed to.
//
// The commitment (bench/worker/counter_fill.py, commit_sums): the tensor's bytes as zero-padded
// little-endian signed 16-bit words w_j and, for two per-position keys k_j (the low 16 bits of
// mix32(j ^ salt)), the sum of (w_j xor k_j), with the byte count. Every element counts on its own
// (no output can be committed to without computing it), and it costs two passes per key; it is not
// a cryptographic hash (docs/integrity.md, limits).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "bench/eval/tensor_file.h"

namespace pk::bench {

struct tensor_commit {
  std::uint64_t bytes = 0;
  std::int64_t s0 = 0, s1 = 0;
  bool operator==(const tensor_commit&) const = default;
};

/// The commitment to `bytes` (a tensor's data as recorded).
tensor_commit commit_of(std::string_view bytes);

/// The commitments of a recorded file's output tensors, in the order the worker records them
/// (depth first, dict keys before values, a sparse tensor's indices before its values).
std::vector<tensor_commit> output_commits(const tensor_file& f);

/// One call's commitments as a timed block's second answer carries them: [[bytes, s0, s1], ...];
/// nullopt when the JSON is not of that form.
std::optional<std::vector<tensor_commit>> commits_from_json(const nlohmann::json& call);

/// Why `recorded` does not hold the outputs `committed` describes; nullopt when it does.
std::optional<std::string> commit_mismatch(const tensor_file& recorded, const std::vector<tensor_commit>& committed);

}  // namespace pk::bench
