// results.jsonl: one line per finished episode (docs/results.md). The writer appends whole lines
// and flushes them to disk; the reader keeps going past bad lines and says which it skipped and why.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/metrics/result.h"

namespace pk::metrics {

struct skipped_line {
  std::filesystem::path file;
  std::size_t line = 0;  // 1-based
  std::string reason;
};

/// "FILE:LINE: reason", the form compilers use, so editors can jump to it.
std::string describe(const skipped_line& skipped);

struct results_read {
  std::vector<episode_result> results;  // in file order
  std::vector<skipped_line> skipped;
};

/// Reads every line of `file`. Blank lines are ignored; a line that is not valid JSON, does not
/// match the format, or repeats an episode already read (same run, mode, model, problem, sample)
/// is skipped and recorded, except that a later line of an episode replaces an infrastructure
/// failure (is_infrastructure_failure), which a resumed run retries and appends again. Throws
/// std::runtime_error only when the file cannot be opened or read.
results_read read_results(const std::filesystem::path& file);

/// Appends `result` as one line and flushes it to stable storage before returning. Safe to call
/// from many threads of one process at once (lines never interleave); throws std::runtime_error
/// naming the file on any I/O error.
void append_result(const std::filesystem::path& file, const episode_result& result);

}  // namespace pk::metrics
