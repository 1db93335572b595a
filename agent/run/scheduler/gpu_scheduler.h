// Leases of the host's GPUs to evaluations, in groups of a problem's world size.
//
// A lease is exclusive: while it is held no other lease includes any of its GPUs, so a timing
// never overlaps other GPU work on those GPUs. Requests are served strictly first come, first
// served: a request never overtakes an earlier one, so a world-4 evaluation is not starved by a
// stream of world-2 ones (the price: GPUs may idle while the head of the queue waits for enough
// of them). GPU-seconds (world size x seconds held) are charged to the lease's holder, and a
// holder that has used its cap is refused. See README.md for how the episode runner uses leases.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace pk::scheduler {

using clock = std::chrono::steady_clock;
/// Where the scheduler reads the time; tests pass a manual clock.
using clock_source = std::function<clock::time_point()>;

/// Whoever GPU-seconds are charged to (an episode). Only valid with the scheduler that made it.
struct holder {
  std::size_t index = 0;
};

/// Why a request got no lease (expected outcomes, not errors).
enum class refusal {
  over_cap,   // the holder has used its GPU-second cap
  too_large,  // more GPUs asked for than the host has
  cancelled,  // the caller's stop_token was triggered while waiting
  shut_down,  // the scheduler is shutting down
};
std::string_view to_string(refusal reason);

class gpu_scheduler;

/// The right to use `gpus()` exclusively, until destroyed or release()d. Move-only.
class lease {
 public:
  lease(lease&& other) noexcept;
  lease& operator=(lease&& other) noexcept;
  lease(const lease&) = delete;
  lease& operator=(const lease&) = delete;
  ~lease();

  /// Host GPU indices, ascending; rank r of the evaluation runs on gpus()[r].
  const std::vector<int>& gpus() const { return gpus_; }
  /// When the holder reaches its cap if it keeps only this lease; clock::time_point::max() when
  /// uncapped. The runner passes this to the evaluation as its deadline.
  clock::time_point deadline() const { return deadline_; }
  /// Ends the lease now and charges its GPU-seconds; idempotent.
  void release();

 private:
  friend class gpu_scheduler;
  lease(gpu_scheduler* owner, std::uint64_t id, std::vector<int> gpus, clock::time_point deadline);

  gpu_scheduler* owner_ = nullptr;
  std::uint64_t id_ = 0;
  std::vector<int> gpus_;
  clock::time_point deadline_;
};

/// A lease, or the reason there is none.
class acquire_result {
 public:
  acquire_result(lease granted) : lease_(std::move(granted)) {}
  acquire_result(refusal reason, std::string message) : reason_(reason), message_(std::move(message)) {}

  bool ok() const { return lease_.has_value(); }
  explicit operator bool() const { return ok(); }
  lease& value() { return lease_.value(); }
  refusal reason() const { return reason_; }
  /// For a refusal: one line saying why, naming the holder.
  const std::string& message() const { return message_; }

 private:
  std::optional<lease> lease_;
  refusal reason_ = refusal::shut_down;
  std::string message_;
};

/// One ended lease, as a run's lease log records it. Wall-clock (Unix) times, so that logs of
/// several processes line up; a later lease of a GPU never starts before an earlier one of it ended.
struct lease_record {
  std::string holder;
  std::vector<int> gpus;
  double start_s = 0;
  double end_s = 0;
};

struct usage {
  std::string name;
  double gpu_seconds = 0;  // charged so far, live leases included
  std::optional<double> cap;
  int leases = 0;          // granted so far
};

class gpu_scheduler {
 public:
  /// Schedules the host GPUs with these indices (e.g. sandbox::host_gpu_indices()).
  explicit gpu_scheduler(std::vector<int> gpu_indices, clock_source now = clock::now);
  /// A simulated host of `count` GPUs numbered 0..count-1 (tests, CPU runs).
  static gpu_scheduler simulated(int count, clock_source now = clock::now);

  gpu_scheduler(const gpu_scheduler&) = delete;
  gpu_scheduler& operator=(const gpu_scheduler&) = delete;
  /// Every lease must have ended before the scheduler is destroyed.
  ~gpu_scheduler();

  /// Registers a holder; `gpu_seconds_cap` unset means no cap.
  holder add_holder(std::string name, std::optional<double> gpu_seconds_cap = std::nullopt);

  /// Waits for `world_size` GPUs in first-come order. Throws std::invalid_argument for
  /// world_size < 1 or an unknown holder (programming errors).
  acquire_result acquire(holder who, int world_size, std::stop_token stop = {});

  usage usage_of(holder who) const;
  int gpu_count() const { return static_cast<int>(gpus_.size()); }
  int free_gpus() const;
  int waiting() const;

  /// Refuses every waiting and future request (refusal::shut_down); held leases stay valid.
  void shutdown();

  /// Called once per ended lease, outside the scheduler's lock, from the releasing thread (so
  /// concurrently from several). Set it before the first acquire.
  void on_lease_end(std::function<void(const lease_record&)> observer) { on_lease_end_ = std::move(observer); }

 private:
  friend class lease;
  struct holder_state {
    std::string name;
    std::optional<double> cap;
    double charged = 0;  // by ended leases
    int leases = 0;
  };
  struct live_lease {
    std::size_t holder = 0;
    std::vector<std::size_t> slots;
    clock::time_point start;
    double start_wall = 0;  // Unix seconds, for lease_record
  };

  void release(std::uint64_t id);
  double used_locked(std::size_t holder, clock::time_point now) const;
  std::optional<acquire_result> refuse_over_cap(std::size_t holder, clock::time_point now) const;
  void leave_queue(std::uint64_t ticket);

  std::vector<int> gpus_;
  clock_source now_;
  mutable std::mutex mutex_;
  std::condition_variable_any changed_;
  std::vector<bool> busy_;
  std::deque<std::uint64_t> queue_;  // tickets of waiting requests, oldest first
  std::uint64_t next_ticket_ = 0;
  std::uint64_t next_lease_ = 0;
  std::vector<holder_state> holders_;
  std::map<std::uint64_t, live_lease> live_;
  bool shut_down_ = false;
  std::function<void(const lease_record&)> on_lease_end_;
};

}  // namespace pk::scheduler
