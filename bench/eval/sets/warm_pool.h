// Process sets started ahead of need, so that an evaluation inside a run (`pkb check`, `pkb bench`,
// final scoring) does not wait for Python and torch to start in every rank (seconds on a GPU host).
//
// A warm set is a fresh sandbox whose ranks have imported torch and the worker and wait, connected
// to the judge, for their evaluation: no problem file, no candidate, no CUDA context yet. It is
// handed to one evaluation and spent: isolation is exactly that of a set started on demand, since
// no code of any candidate ever ran in a set before its own evaluation. The pool keeps, for every
// kind of set it was asked for (world, device, GPUs, isolation), a few of them ready and starts a
// replacement whenever one is taken.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "bench/eval/sets/rank_set.h"
#include "bench/eval/sets/staging.h"

namespace pk::bench {

class warm_pool {
 public:
  /// Keeps `per_kind` warm sets of every kind asked for (an evaluation with timing takes two).
  explicit warm_pool(std::size_t per_kind = 2);
  ~warm_pool();
  warm_pool(const warm_pool&) = delete;
  warm_pool& operator=(const warm_pool&) = delete;

  /// A set made by `o`: a warm one when one is ready, else one started now.
  std::unique_ptr<rank_set> take(const set_options& o);
  /// Starts sets of `o`'s kind until the pool holds its size of them (those that ended while they
  /// waited are dropped first).
  void warm(const set_options& o);

  /// Sets waiting, over all kinds.
  std::size_t size() const;

 private:
  void fill(const set_options& o, std::deque<std::unique_ptr<rank_set>>& q);

  const std::size_t per_kind_;
  mutable std::mutex mutex_;
  std::map<std::string, std::deque<std::unique_ptr<rank_set>>> ready_;
};

}  // namespace pk::bench
