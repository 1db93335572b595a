#include "agent/run/runner.h"

#include <unistd.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "agent/run/backlog.h"
#include "agent/run/episode_driver.h"
#include "agent/run/lease_log.h"
#include "agent/run/progress.h"
#include "agent/run/run_ledger.h"
#include "agent/run/run_setup.h"
#include "bench/metrics/results_file.h"

namespace pk::run {
namespace {

// The earlier invocations' results, counted in the summary and shown by the progress display.
void restore(const run_backlog& backlog, const run_setup& setup, run_summary& s, progress& prog) {
  s.skipped = backlog.skipped;
  for (const auto& r : backlog.scored) {
    s.correct += r.correct;
    ++s.end_reasons[r.end_reason];
    prog.restored(r.correct, faster_beyond_noise(r), r.tokens_in + r.tokens_out, r.dollars);
  }
  if (s.skipped > 0)
    prog.note(fmt::format("{}: {} of {} episodes already scored; running the other {}", setup.o.out.string(),
                          s.skipped, s.episodes, backlog.pending.size()));
}

// Runs the pending episodes on the run's `jobs` threads. An episode's failure is noted, counted and
// recorded as the infrastructure's (apart from the model's; a rerun retries it), and the others go
// on. Once the whole run's model spend reaches `max_dollars`, no further episode starts.
void run_pending(const std::vector<episode_slot>& pending, const run_setup& setup, episode_driver& driver,
                 progress& prog, run_summary& s) {
  const run_options& o = setup.o;
  const run_facts facts{setup.run_id, o.mode, setup.model.name, o.world, o.device};
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  auto worker = [&] {
    while (true) {
      const std::size_t i = next++;
      if (i >= pending.size()) return;
      const episode_slot slot = pending[i];
      if (o.max_dollars && run_dollars(o.out, setup.run_id) >= *o.max_dollars) {
        std::lock_guard lock(mu);
        ++s.unstarted;
        continue;
      }
      try {
        const metrics::episode_result r = driver.run(*slot.problem, slot.sample);
        std::lock_guard lock(mu);
        ++s.finished;
        s.correct += r.correct;
        ++s.end_reasons[r.end_reason];
      } catch (const std::exception& e) {
        prog.note(fmt::format("episode {}/sample-{} failed: {}", slot.problem->name(), slot.sample, e.what()));
        try {
          metrics::append_result(results_file(o),
                                 infrastructure_failure(o.out, *slot.problem, slot.sample, facts, "harness_error"));
        } catch (const std::exception& again) {
          prog.note(fmt::format("episode {}/sample-{}: cannot record its failure: {}", slot.problem->name(),
                                slot.sample, again.what()));
        }
        std::lock_guard lock(mu);
        ++s.failed;
        ++s.end_reasons["harness_error"];
      }
    }
  };
  std::vector<std::jthread> pool;
  const int n = std::min<int>(o.jobs, static_cast<int>(pending.size()));
  for (int j = 0; j < n; ++j) pool.emplace_back(worker);
}

}  // namespace

runner::runner(run_options o, scheduler::gpu_scheduler& gpus) : o_(std::move(o)), gpus_(gpus) {}

run_summary runner::run() {
  run_setup setup = prepare_run(o_);
  prepare_tasks(setup);
  const run_backlog backlog = take_stock(setup.o, setup.run_id, setup.problems);
  run_summary s;
  s.episodes = backlog.episodes;
  progress prog(s.episodes, backlog.skipped, stderr,
                progress_mode_for(setup.o.progress, setup.o.quiet, ::isatty(STDERR_FILENO) == 1),
                setup.demo || setup.model.price.known);
  restore(backlog, setup, s, prog);
  std::optional<lease_log> leases;  // a shard with nothing left to run leaves no lease log
  if (!backlog.pending.empty()) leases.emplace(gpus_, leases_file(setup.o));
  episode_driver driver(setup, gpus_, prog, on_event);
  run_pending(backlog.pending, setup, driver, prog, s);
  return s;
}

}  // namespace pk::run
