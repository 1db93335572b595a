// The scheduler on simulated hosts: exclusivity, concurrency, FIFO fairness, GPU-second caps.
// Time-based checks use a manual clock; the threaded checks order events by a shared sequence
// counter instead of wall time, so they hold on a loaded 2-core CI machine.
#include "agent/run/scheduler/gpu_scheduler.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace {

using namespace pk::scheduler;
using namespace std::chrono_literals;

// A clock the test moves by hand.
struct manual_clock {
  std::atomic<clock::rep> ticks{0};
  clock_source source() {
    return [this] { return clock::time_point(clock::duration(ticks.load())); };
  }
  void advance(std::chrono::duration<double> d) {
    ticks += std::chrono::duration_cast<clock::duration>(d).count();
  }
};

// Every lease's GPUs and its [start, end] in a global event order.
struct interval_log {
  std::mutex mutex;
  std::uint64_t sequence = 0;
  struct entry {
    std::vector<int> gpus;
    std::uint64_t start, end;
  };
  std::vector<entry> entries;

  std::uint64_t tick() {
    std::lock_guard lock(mutex);
    return sequence++;
  }
  void add(std::vector<int> gpus, std::uint64_t start, std::uint64_t end) {
    std::lock_guard lock(mutex);
    entries.push_back({std::move(gpus), start, end});
  }
  // Two leases sharing a GPU must not overlap in event order.
  int overlaps() {
    int bad = 0;
    for (std::size_t i = 0; i < entries.size(); ++i)
      for (std::size_t j = i + 1; j < entries.size(); ++j) {
        const auto &a = entries[i], &b = entries[j];
        bool share = false;
        for (int g : a.gpus)
          for (int h : b.gpus) share |= g == h;
        if (share && a.start < b.end && b.start < a.end) ++bad;
      }
    return bad;
  }
};

TEST(gpu_scheduler, no_two_leases_overlap_on_a_gpu) {
  auto scheduler = gpu_scheduler::simulated(4);
  interval_log log;
  std::vector<std::thread> threads;
  const int worlds[] = {1, 2, 4, 2, 3, 1, 2, 2};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      auto who = scheduler.add_holder("episode " + std::to_string(t));
      for (int i = 0; i < 25; ++i) {
        auto got = scheduler.acquire(who, worlds[t]);
        ASSERT_TRUE(got.ok()) << got.message();
        auto start = log.tick();
        EXPECT_EQ(static_cast<int>(got.value().gpus().size()), worlds[t]);
        std::this_thread::yield();
        auto end = log.tick();
        log.add(got.value().gpus(), start, end);
      }  // the lease is released by its destructor
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(log.entries.size(), 200u);
  EXPECT_EQ(log.overlaps(), 0);
  EXPECT_EQ(scheduler.free_gpus(), 4);
}

TEST(gpu_scheduler, a_four_gpu_host_runs_two_world_2_evaluations_at_once) {
  auto scheduler = gpu_scheduler::simulated(4);
  std::mutex mutex;
  std::condition_variable both_held;
  int held = 0;
  std::vector<std::vector<int>> gpus(2);
  bool together[2] = {false, false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      auto got = scheduler.acquire(scheduler.add_holder("evaluation " + std::to_string(t)), 2);
      ASSERT_TRUE(got.ok());
      gpus[t] = got.value().gpus();
      std::unique_lock lock(mutex);
      ++held;
      both_held.notify_all();
      together[t] = both_held.wait_for(lock, 10s, [&] { return held == 2; });
    });
  for (auto& th : threads) th.join();
  EXPECT_TRUE(together[0] && together[1]) << "the second world-2 lease waited for the first";
  std::vector<int> all = gpus[0];
  all.insert(all.end(), gpus[1].begin(), gpus[1].end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<int>{0, 1, 2, 3}));
}

TEST(gpu_scheduler, a_waiting_world_4_request_is_not_starved_by_world_2_requests) {
  auto scheduler = gpu_scheduler::simulated(4);
  constexpr int feeders = 6;
  std::atomic<bool> stop{false};
  std::atomic<int> world2_grants{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < feeders; ++t)
    threads.emplace_back([&, t] {
      auto who = scheduler.add_holder("small " + std::to_string(t));
      while (!stop) {
        auto got = scheduler.acquire(who, 2);
        if (!got) break;
        ++world2_grants;
        std::this_thread::sleep_for(1ms);
      }
    });
  while (world2_grants < 50) std::this_thread::sleep_for(1ms);  // the stream is flowing

  // Each feeder has at most one request ahead of the big one, so at most `feeders` world-2 grants
  // can come between its request and its grant. A scheduler that hands freed GPUs to whoever fits
  // would keep the world-4 request waiting as long as the stream runs: give up after 20 s.
  std::stop_source give_up;
  std::thread watchdog([&] {
    for (int i = 0; i < 2000 && !give_up.stop_requested(); ++i) std::this_thread::sleep_for(10ms);
    give_up.request_stop();
  });
  const int before = world2_grants;
  auto big = scheduler.acquire(scheduler.add_holder("big"), 4, give_up.get_token());
  const int during = world2_grants - before;
  give_up.request_stop();
  watchdog.join();
  ASSERT_TRUE(big.ok()) << big.message();
  EXPECT_EQ(big.value().gpus(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_LE(during, feeders);
  big.value().release();
  stop = true;
  for (auto& th : threads) th.join();
}

TEST(gpu_scheduler, gpu_seconds_are_charged_per_holder_and_capped) {
  manual_clock time;
  auto scheduler = gpu_scheduler::simulated(4, time.source());
  auto capped = scheduler.add_holder("episode 7", 10.0);
  auto other = scheduler.add_holder("episode 8");

  {
    auto got = scheduler.acquire(capped, 2);
    ASSERT_TRUE(got.ok());
    // 10 GPU-seconds left over 2 GPUs: 5 wall seconds.
    EXPECT_EQ(got.value().deadline() - clock::time_point{}, std::chrono::duration_cast<clock::duration>(5s));
    auto also = scheduler.acquire(other, 1);
    time.advance(1.5s);
    EXPECT_DOUBLE_EQ(scheduler.usage_of(capped).gpu_seconds, 3.0);  // live lease counted
    EXPECT_DOUBLE_EQ(scheduler.usage_of(other).gpu_seconds, 1.5);
  }
  time.advance(100s);  // nothing held: nothing charged
  EXPECT_DOUBLE_EQ(scheduler.usage_of(capped).gpu_seconds, 3.0);

  {
    auto got = scheduler.acquire(capped, 4);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(got.value().deadline() - clock::time_point{}, std::chrono::duration_cast<clock::duration>(101.5s + 1.75s));
    time.advance(2s);  // 8 more: 11 > 10, the runner's deadline would have stopped it at 1.75 s
  }
  auto u = scheduler.usage_of(capped);
  EXPECT_DOUBLE_EQ(u.gpu_seconds, 11.0);
  EXPECT_EQ(u.leases, 2);
  EXPECT_EQ(u.name, "episode 7");

  auto refused = scheduler.acquire(capped, 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.reason(), refusal::over_cap);
  EXPECT_EQ(refused.message(), "episode 7 has used 11.0 of its 10.0 GPU-seconds; no more GPU time is granted to it");
  EXPECT_TRUE(scheduler.acquire(other, 4).ok());  // caps are per holder
  EXPECT_EQ(scheduler.free_gpus(), 4);
}

TEST(gpu_scheduler, refusals_are_typed) {
  auto scheduler = gpu_scheduler::simulated(2);
  auto who = scheduler.add_holder("episode 1");
  auto big = scheduler.acquire(who, 4);
  EXPECT_EQ(big.reason(), refusal::too_large);
  EXPECT_EQ(big.message(), "episode 1 asks for 4 GPUs; this host has 2");
  EXPECT_THROW(scheduler.acquire(who, 0), std::invalid_argument);
  EXPECT_THROW(scheduler.acquire(holder{99}, 1), std::invalid_argument);

  auto held = scheduler.acquire(who, 2);
  ASSERT_TRUE(held.ok());
  std::stop_source cancel;
  std::thread canceller([&] {
    while (scheduler.waiting() == 0) std::this_thread::sleep_for(1ms);
    cancel.request_stop();
  });
  auto waited = scheduler.acquire(who, 1, cancel.get_token());
  canceller.join();
  EXPECT_EQ(waited.reason(), refusal::cancelled);
  EXPECT_EQ(scheduler.waiting(), 0);  // a cancelled request leaves the queue

  std::thread stopper([&] {
    while (scheduler.waiting() == 0) std::this_thread::sleep_for(1ms);
    scheduler.shutdown();
  });
  auto during_shutdown = scheduler.acquire(who, 1);
  stopper.join();
  EXPECT_EQ(during_shutdown.reason(), refusal::shut_down);
  EXPECT_EQ(scheduler.acquire(who, 1).reason(), refusal::shut_down);
  EXPECT_EQ(held.value().gpus(), (std::vector<int>{0, 1}));  // held leases stay valid
}

TEST(lease, moves_and_early_release_free_the_gpus_once) {
  auto scheduler = gpu_scheduler::simulated(2);
  auto who = scheduler.add_holder("episode");
  auto got = scheduler.acquire(who, 2);
  ASSERT_TRUE(got.ok());
  lease moved = std::move(got.value());
  EXPECT_EQ(scheduler.free_gpus(), 0);
  moved.release();
  moved.release();
  EXPECT_EQ(scheduler.free_gpus(), 2);
  auto again = scheduler.acquire(who, 1);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(scheduler.free_gpus(), 1);
}

TEST(gpu_scheduler, reports_each_ended_lease_once_with_its_holder_gpus_and_times) {
  auto scheduler = gpu_scheduler::simulated(4);
  std::mutex mutex;
  std::vector<lease_record> records;
  scheduler.on_lease_end([&](const lease_record& r) {
    std::lock_guard lock(mutex);
    records.push_back(r);
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      auto who = scheduler.add_holder("episode " + std::to_string(t));
      for (int i = 0; i < 20; ++i) {
        auto got = scheduler.acquire(who, 2);
        ASSERT_TRUE(got.ok()) << got.message();
        std::this_thread::sleep_for(100us);
        got.value().release();
        got.value().release();  // idempotent: still one record
      }
    });
  for (auto& t : threads) t.join();
  ASSERT_EQ(records.size(), 80u);
  std::map<std::string, int> per_holder;
  for (const auto& r : records) {
    ++per_holder[r.holder];
    EXPECT_EQ(r.gpus.size(), 2u);
    EXPECT_LE(r.start_s, r.end_s);
  }
  EXPECT_EQ(per_holder.size(), 4u);
  for (const auto& [name, n] : per_holder) EXPECT_EQ(n, 20) << name;
  // The wall-clock times are taken under the scheduler's lock: a GPU's next lease starts no
  // earlier than its previous one ended.
  for (std::size_t i = 0; i < records.size(); ++i)
    for (std::size_t j = i + 1; j < records.size(); ++j) {
      const auto &a = records[i], &b = records[j];
      bool share = false;
      for (int g : a.gpus)
        for (int h : b.gpus) share |= g == h;
      if (share) {
        EXPECT_TRUE(a.end_s <= b.start_s || b.end_s <= a.start_s) << i << " and " << j << " overlap";
      }
    }
}

TEST(gpu_scheduler, hands_out_the_host_indices_it_was_given) {
  gpu_scheduler scheduler({6, 2, 4});
  auto got = scheduler.acquire(scheduler.add_holder("episode"), 2);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got.value().gpus(), (std::vector<int>{2, 4}));
  EXPECT_THROW(gpu_scheduler({1, 1}), std::invalid_argument);
}

}  // namespace
