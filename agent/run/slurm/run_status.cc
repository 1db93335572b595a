#include "agent/run/slurm/run_status.h"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agent/run/atomic_file.h"
#include "bench/report/format.h"
#include "config/enum_names.h"

namespace pk::run {
namespace fs = std::filesystem;

namespace {

int count_of(const std::filesystem::path& out, std::optional<int> given, const std::optional<slurm_record>& record) {
  if (given) return *given;
  if (record) return record->shards;
  std::set<int> counts;
  for (const shard_id& s : shards_present(out)) counts.insert(s.count);
  if (counts.size() > 1)
    throw std::invalid_argument(fmt::format("{}/shards holds shards of {} different counts ({}); say which with "
                                            "--shards N",
                                            out.string(), counts.size(), fmt::join(counts, ", ")));
  return counts.empty() ? 0 : *counts.begin();
}

// Why an ended shard has episodes missing, and whether it was lost (ended before it finished).
void explain_end(shard_status& st, const std::optional<shard_state>& state, const fs::path& out) {
  if (!state && st.job.empty()) {
    st.phase = shard_phase::unsubmitted;
    st.note = "not started";
    return;
  }
  if (state && state->state == "finished" && st.harness_errors == 0) {
    // It ended by itself: what is missing came later (the plan grew) or was held back by the dollar limit.
    st.phase = shard_phase::unsubmitted;
    st.note = state->unstarted > 0 ? fmt::format("{} episode(s) not started: the run's dollar limit was reached",
                                                 state->unstarted)
                                   : "episodes added to the plan since it ran";
    return;
  }
  st.phase = shard_phase::failed;
  std::vector<std::string> why;
  if (!state) {
    st.lost = true;
    why.push_back("it ended before writing its state (it failed at start)");
  } else if (state->state == "running") {
    st.lost = true;
    why.push_back("it ended while running (cancelled, time limit or node lost)");
  } else if (state->state == "failed") {
    st.lost = true;
    why.push_back(state->message.empty() ? "it failed" : state->message);
  }
  if (st.harness_errors > 0) why.push_back(fmt::format("{} harness error(s)", st.harness_errors));
  if (!st.job.empty()) {
    if (auto info = show_job(st.job)) {
      // ExitCode is "code:signal".
      const auto colon = info->exit_code.find(':');
      const std::string code = info->exit_code.substr(0, colon);
      const std::string signal = colon == std::string::npos ? "0" : info->exit_code.substr(colon + 1);
      why.push_back(fmt::format("Slurm: {}{}", info->state,
                                signal != "0" ? " (signal " + signal + ")"
                                : code != "0" && !code.empty() ? " (exit code " + code + ")"
                                                               : ""));
    }
    const auto us = st.job.find('_');
    why.push_back(fmt::format("log {}", (slurm_dir(out) / "logs" /
                                         fmt::format("shard-{}.{}.out", st.id.index, st.job.substr(0, us)))
                                            .string()));
  }
  st.note = fmt::format("{}", fmt::join(why, "; "));
}

}  // namespace

std::optional<shard_phase> live_phase(const std::string& slurm_state) {
  if (slurm_state == "PENDING" || slurm_state == "CONFIGURING" || slurm_state == "REQUEUED" ||
      slurm_state == "REQUEUE_HOLD" || slurm_state == "RESIZING")
    return shard_phase::pending;
  if (slurm_state == "RUNNING" || slurm_state == "SUSPENDED" || slurm_state == "STOPPED" ||
      slurm_state == "SIGNALING")
    return shard_phase::running;
  return std::nullopt;
}

constexpr std::array<pk::config::enum_name<shard_phase>, 5> shard_phase_names = {{
    {shard_phase::unsubmitted, "to run"},
    {shard_phase::pending, "pending"},
    {shard_phase::running, "running"},
    {shard_phase::done, "done"},
    {shard_phase::failed, "failed"},
}};

std::string_view to_string(shard_phase p) { return pk::config::enum_to_string(shard_phase_names, p); }

run_status read_status(const fs::path& out, std::optional<int> shard_count) {
  run_status st;
  st.plan = read_plan(out);
  const auto record = read_slurm_record(out);
  st.shard_count = count_of(out, shard_count, record);
  const run_ledger ledger = read_ledger(out, st.plan.run_id);
  const auto episodes = plan_episodes(st.plan);
  st.episodes = static_cast<int>(episodes.size());
  for (const auto& e : episodes) {
    auto it = ledger.results.find(e);
    if (it == ledger.results.end()) continue;
    const auto& r = it->second;
    st.spend.tokens_in += r.tokens_in;
    st.spend.tokens_out += r.tokens_out;
    st.spend.dollars += r.dollars;
    st.gpu_seconds += r.gpu_seconds;
    if (metrics::is_infrastructure_failure(r)) {
      ++st.infrastructure;
      continue;
    }
    ++st.scored;
    st.correct += r.correct;
  }
  if (st.shard_count == 0) return st;

  // One squeue for every job the run knows of.
  std::vector<std::optional<shard_state>> states;
  std::set<std::string> ids;
  for (int i = 0; i < st.shard_count; ++i) {
    states.push_back(read_state(files_of(out, {i, st.shard_count}).state));
    std::string job = record ? record->job_of(i) : "";
    if (job.empty() && states.back()) job = states.back()->slurm_job;
    if (!job.empty()) ids.insert(job.substr(0, job.find('_')));
  }
  if (record && !record->submissions.empty()) {
    st.merge_job = record->submissions.back().merge_job;
    ids.insert(st.merge_job);
  }
  std::optional<std::map<std::string, std::string>> live;
  if (!ids.empty()) {
    live = queued_jobs({ids.begin(), ids.end()});
    st.slurm_unreachable = !live;
  }
  if (!st.merge_job.empty()) {
    if (live && live->count(st.merge_job)) st.merge_state = live->at(st.merge_job);
    else if (auto info = show_job(st.merge_job)) st.merge_state = info->state;
    else if (live) st.merge_state = "ended";
  }

  const std::string host = host_name();
  for (int i = 0; i < st.shard_count; ++i) {
    shard_status s;
    s.id = {i, st.shard_count};
    const auto& state = states[static_cast<std::size_t>(i)];
    s.job = record ? record->job_of(i) : "";
    if (s.job.empty() && state) s.job = state->slurm_job;
    if (state) s.host = state->host;
    for (const auto& e : shard_episodes(st.plan, s.id)) {
      ++s.episodes;
      auto it = ledger.results.find(e);
      if (it == ledger.results.end()) continue;
      if (metrics::is_infrastructure_failure(it->second)) {
        ++s.infrastructure;
        s.harness_errors += it->second.end_reason == "harness_error";
      } else {
        ++s.scored;
      }
    }
    std::optional<shard_phase> alive;
    if (!s.job.empty() && live && live->count(s.job)) alive = live_phase(live->at(s.job));
    if (!alive && s.job.empty() && state && state->state == "running") {
      // Started by hand, outside Slurm: alive while its process is, which only its own host can tell.
      if (state->host != host) {
        alive = shard_phase::running;
        s.note = fmt::format("started outside Slurm on {}: its liveness is known there only", state->host);
      } else if (::kill(static_cast<pid_t>(state->pid), 0) == 0) {
        alive = shard_phase::running;
      }
    }
    if (alive) s.phase = *alive;
    else if (!s.has_missing()) s.phase = shard_phase::done;
    else explain_end(s, state, out);
    st.shards.push_back(std::move(s));
  }
  return st;
}

std::string format_status(const run_status& st, const fs::path& out) {
  std::string text = fmt::format(
      "{}: {} {}, run {}: {} episode(s), {} scored ({} correct), {} infrastructure failure(s), {} to run\n"
      "spend: {} tokens, {}, {:.1f} GPU-seconds\n",
      out.string(), st.plan.mode, st.plan.model, st.plan.run_id, st.episodes, st.scored, st.correct,
      st.infrastructure, st.episodes - st.scored, report::tokens(static_cast<double>(st.spend.tokens_in +
                                                                                    st.spend.tokens_out)),
      report::dollars(st.spend.dollars), st.gpu_seconds);
  if (st.shard_count == 0) return text;
  text += fmt::format("\n{:<8} {:<8} {:>7} {:>6} {:<12} {:<12} {}\n", "shard", "state", "scored", "infra", "job",
                      "host", "note");
  bool alive = false, to_resume = false;
  for (const auto& s : st.shards) {
    text += fmt::format("{:<8} {:<8} {:>7} {:>6} {:<12} {:<12} {}\n", s.id.text(), to_string(s.phase),
                        fmt::format("{}/{}", s.scored, s.episodes), s.infrastructure, s.job.empty() ? "-" : s.job,
                        s.host.empty() ? "-" : s.host, s.note);
    alive |= s.phase == shard_phase::pending || s.phase == shard_phase::running;
    to_resume |= s.has_missing() && s.phase != shard_phase::pending && s.phase != shard_phase::running;
  }
  if (!st.merge_job.empty()) text += fmt::format("\nmerge job {}: {}\n", st.merge_job, st.merge_state);
  if (st.slurm_unreachable) text += "squeue cannot run here: the states above come from the run directory alone\n";
  if (alive)
    text += fmt::format("follow: pkagent run --status {} (logs: {})\n", out.string(),
                        (slurm_dir(out) / "logs").string());
  if (to_resume)
    text += "resume: rerun the same `pkagent run ... --slurm` command; only shards with missing episodes are "
            "submitted, and they run only those\n";
  if (!alive && !to_resume) text += fmt::format("report: {}\n", (out / "report.md").string());
  return text;
}

}  // namespace pk::run
