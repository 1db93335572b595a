#include "bench/eval/sets/warm_pool.h"

#include <algorithm>
#include <chrono>

namespace pk::bench {

namespace {

// A warm set waits for as long as its run keeps it (an agent may think for a long while); the
// judge's deadlines bound its evaluation once it is taken.
constexpr std::chrono::hours waiting_limit{4};

set_options waiting(set_options o) {
  o.wall_limit = std::max<std::chrono::milliseconds>(o.wall_limit, waiting_limit);
  o.progress = nullptr;
  return o;
}

}  // namespace

warm_pool::warm_pool(std::size_t per_kind) : per_kind_(per_kind) {}

warm_pool::~warm_pool() = default;

void warm_pool::fill(const set_options& o, std::deque<std::unique_ptr<rank_set>>& q) {
  // A set whose sandbox ended while it waited (its wall limit, a crash) is of no use.
  std::erase_if(q, [](const auto& s) { return s->ended(); });
  while (q.size() < per_kind_) q.push_back(std::make_unique<rank_set>(make_set_spec(waiting(o))));
}

std::unique_ptr<rank_set> warm_pool::take(const set_options& o) {
  std::lock_guard lock(mutex_);
  auto& q = ready_[o.key()];
  std::erase_if(q, [](const auto& s) { return s->ended(); });
  std::unique_ptr<rank_set> s;
  if (!q.empty()) {
    s = std::move(q.front());
    q.pop_front();
  } else {
    s = std::make_unique<rank_set>(make_set_spec(o));
  }
  return s;
}

void warm_pool::warm(const set_options& o) {
  std::lock_guard lock(mutex_);
  fill(o, ready_[o.key()]);
}

std::size_t warm_pool::size() const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& [k, q] : ready_) n += q.size();
  return n;
}

}  // namespace pk::bench
