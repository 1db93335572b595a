#include "agent/run/scheduler/gpu_scheduler.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <numeric>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "config/enum_names.h"

namespace pk::scheduler {
namespace {

double seconds(clock::duration d) { return std::chrono::duration<double>(d).count(); }

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

constexpr std::array<pk::config::enum_name<refusal>, 4> refusal_names = {{
    {refusal::over_cap, "over_cap"},
    {refusal::too_large, "too_large"},
    {refusal::cancelled, "cancelled"},
    {refusal::shut_down, "shut_down"},
}};

std::string_view to_string(refusal reason) { return pk::config::enum_to_string(refusal_names, reason, "unknown"); }

// ---- lease ----

lease::lease(gpu_scheduler* owner, std::uint64_t id, std::vector<int> gpus, clock::time_point deadline)
    : owner_(owner), id_(id), gpus_(std::move(gpus)), deadline_(deadline) {}

lease::lease(lease&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)),
      id_(other.id_),
      gpus_(std::move(other.gpus_)),
      deadline_(other.deadline_) {}

lease& lease::operator=(lease&& other) noexcept {
  if (this != &other) {
    release();
    owner_ = std::exchange(other.owner_, nullptr);
    id_ = other.id_;
    gpus_ = std::move(other.gpus_);
    deadline_ = other.deadline_;
  }
  return *this;
}

lease::~lease() { release(); }

void lease::release() {
  if (auto* owner = std::exchange(owner_, nullptr)) owner->release(id_);
}

// ---- gpu_scheduler ----

gpu_scheduler::gpu_scheduler(std::vector<int> gpu_indices, clock_source now)
    : gpus_(std::move(gpu_indices)), now_(std::move(now)), busy_(gpus_.size(), false) {
  std::sort(gpus_.begin(), gpus_.end());
  if (std::adjacent_find(gpus_.begin(), gpus_.end()) != gpus_.end())
    throw std::invalid_argument("gpu_scheduler: a GPU index is listed twice");
}

gpu_scheduler gpu_scheduler::simulated(int count, clock_source now) {
  if (count < 0) throw std::invalid_argument("gpu_scheduler: negative GPU count");
  std::vector<int> indices(static_cast<std::size_t>(count));
  std::iota(indices.begin(), indices.end(), 0);
  return gpu_scheduler(std::move(indices), std::move(now));
}

gpu_scheduler::~gpu_scheduler() {
  shutdown();
  // A lease outliving its scheduler would release into freed memory: a bug in the caller.
  assert(live_.empty() && "gpu_scheduler destroyed while leases are held");
}

holder gpu_scheduler::add_holder(std::string name, std::optional<double> cap) {
  if (cap && !(*cap >= 0)) throw std::invalid_argument(fmt::format("holder {}: GPU-second cap must be >= 0", name));
  std::lock_guard lock(mutex_);
  holders_.push_back({std::move(name), cap, 0, 0});
  return holder{holders_.size() - 1};
}

double gpu_scheduler::used_locked(std::size_t who, clock::time_point now) const {
  double used = holders_[who].charged;
  for (const auto& [id, l] : live_)
    if (l.holder == who) used += static_cast<double>(l.slots.size()) * seconds(now - l.start);
  return used;
}

std::optional<acquire_result> gpu_scheduler::refuse_over_cap(std::size_t who, clock::time_point now) const {
  const auto& h = holders_[who];
  if (!h.cap) return std::nullopt;
  double used = used_locked(who, now);
  if (used < *h.cap) return std::nullopt;
  return acquire_result(refusal::over_cap, fmt::format("{} has used {:.1f} of its {:.1f} GPU-seconds; no more GPU "
                                                       "time is granted to it",
                                                       h.name, used, *h.cap));
}

void gpu_scheduler::leave_queue(std::uint64_t ticket) {
  auto it = std::find(queue_.begin(), queue_.end(), ticket);
  if (it != queue_.end()) queue_.erase(it);
  changed_.notify_all();  // the next request may now be at the head
}

acquire_result gpu_scheduler::acquire(holder who, int world_size, std::stop_token stop) {
  if (world_size < 1) throw std::invalid_argument(fmt::format("gpu_scheduler: world size {} < 1", world_size));
  std::unique_lock lock(mutex_);
  if (who.index >= holders_.size()) throw std::invalid_argument("gpu_scheduler: unknown holder");
  const auto& name = holders_[who.index].name;
  if (world_size > gpu_count())
    return {refusal::too_large,
            fmt::format("{} asks for {} GPUs; this host has {}", name, world_size, gpu_count())};
  if (shut_down_) return {refusal::shut_down, fmt::format("{}: the GPU scheduler is shutting down", name)};
  if (auto refused = refuse_over_cap(who.index, now_())) return std::move(*refused);

  const auto ticket = next_ticket_++;
  queue_.push_back(ticket);
  auto free_count = [&] { return static_cast<int>(std::count(busy_.begin(), busy_.end(), false)); };
  bool ready = changed_.wait(lock, stop, [&] {
    return shut_down_ || (queue_.front() == ticket && free_count() >= world_size);
  });
  if (!ready) {
    leave_queue(ticket);
    return {refusal::cancelled, fmt::format("{}: cancelled while waiting for {} GPUs", name, world_size)};
  }
  if (shut_down_) {
    leave_queue(ticket);
    return {refusal::shut_down, fmt::format("{}: the GPU scheduler is shutting down", name)};
  }
  const auto now = now_();
  if (auto refused = refuse_over_cap(who.index, now)) {  // its other leases may have used the rest
    leave_queue(ticket);
    return std::move(*refused);
  }

  live_lease l{who.index, {}, now, unix_now()};
  std::vector<int> gpus;
  for (std::size_t slot = 0; slot < busy_.size() && static_cast<int>(l.slots.size()) < world_size; ++slot)
    if (!busy_[slot]) {
      busy_[slot] = true;
      l.slots.push_back(slot);
      gpus.push_back(gpus_[slot]);
    }
  auto& h = holders_[who.index];
  ++h.leases;
  auto deadline = clock::time_point::max();
  if (h.cap) {
    double left = (*h.cap - used_locked(who.index, now)) / world_size;
    deadline = now + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(left));
  }
  const auto id = next_lease_++;
  live_.emplace(id, std::move(l));
  queue_.pop_front();
  changed_.notify_all();
  return lease(this, id, std::move(gpus), deadline);
}

void gpu_scheduler::release(std::uint64_t id) {
  lease_record record;
  {
    std::lock_guard lock(mutex_);
    auto it = live_.find(id);
    if (it == live_.end()) return;
    const auto& l = it->second;
    holders_[l.holder].charged += static_cast<double>(l.slots.size()) * seconds(now_() - l.start);
    if (on_lease_end_) {
      record.holder = holders_[l.holder].name;
      for (auto slot : l.slots) record.gpus.push_back(gpus_[slot]);
      record.start_s = l.start_wall;
      record.end_s = unix_now();  // before the GPUs are free again
    }
    for (auto slot : l.slots) busy_[slot] = false;
    live_.erase(it);
    changed_.notify_all();
  }
  if (on_lease_end_) on_lease_end_(record);
}

usage gpu_scheduler::usage_of(holder who) const {
  std::lock_guard lock(mutex_);
  if (who.index >= holders_.size()) throw std::invalid_argument("gpu_scheduler: unknown holder");
  const auto& h = holders_[who.index];
  return {h.name, used_locked(who.index, now_()), h.cap, h.leases};
}

int gpu_scheduler::free_gpus() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(std::count(busy_.begin(), busy_.end(), false));
}

int gpu_scheduler::waiting() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(queue_.size());
}

void gpu_scheduler::shutdown() {
  std::lock_guard lock(mutex_);
  shut_down_ = true;
  changed_.notify_all();
}

}  // namespace pk::scheduler
