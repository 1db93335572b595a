#include "agent/run/slurm/slurm_submit.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agent/run/atomic_file.h"
#include "agent/run/run_ledger.h"
#include "agent/run/runner.h"
#include "agent/run/slurm/merge.h"
#include "agent/run/slurm/run_status.h"
#include "agent/run/slurm/slurm.h"
#include "bench/suite/suite.h"
#include "sandbox/plan.h"

namespace pk::run {
namespace fs = std::filesystem;

namespace {

std::string quoted(const std::vector<std::string>& words) {
  std::vector<std::string> q;
  for (const auto& w : words) q.push_back(sandbox::single_quoted(w));
  return fmt::format("{}", fmt::join(q, " "));
}

// "0-3", "1,4-6": the --array list of the shards to run.
std::string array_spec(const std::vector<int>& shards) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < shards.size();) {
    std::size_t j = i;
    while (j + 1 < shards.size() && shards[j + 1] == shards[j] + 1) ++j;
    parts.push_back(i == j ? std::to_string(shards[i]) : fmt::format("{}-{}", shards[i], shards[j]));
    i = j + 1;
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

std::string shard_script(const fs::path& pkagent, const std::vector<std::string>& args, int count) {
  return fmt::format(
      "#!/bin/bash\n"
      "# One shard of a pkagent run per array task (written by `pkagent run --slurm`; docs/slurm.md).\n"
      "set -eu\n"
      "# Reference outputs and built extensions are cached per node, so no two hosts write one entry.\n"
      "export PKAGENT_CACHE=\"${{PKAGENT_CACHE:-${{XDG_CACHE_HOME:-$HOME/.cache}}/pkagent}}/nodes/$(hostname -s)\"\n"
      "exec {} run {} --shard \"${{SLURM_ARRAY_TASK_ID}}/{}\"\n",
      sandbox::single_quoted(pkagent.string()), quoted(args), count);
}

std::string merge_script(const fs::path& pkagent, const fs::path& out, const fs::path& suite) {
  std::vector<std::string> args = {"run", "--merge", fs::absolute(out).string()};
  if (!suite.empty()) args.insert(args.end(), {"--suite-dir", fs::absolute(suite).string()});
  return fmt::format(
      "#!/bin/bash\n"
      "# Merges the shards of a pkagent run into results.jsonl and report.md (written by `pkagent run "
      "--slurm`).\n"
      "set -eu\n"
      "exec {} {}\n",
      sandbox::single_quoted(pkagent.string()), quoted(args));
}

void write_script(const fs::path& file, const std::string& text) {
  write_file_atomically(file, text);
  fs::permissions(file, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
}

// A run of no episodes: checks the options as a run would (problems, model, pkb) and writes run.json
// and the task directories, so a mistake is reported now rather than by every task in the queue.
void prepare(const run_options& o) {
  run_options prep = o;
  prep.quiet = true;
  prep.part = run_part{[](int, int) { return false; }, o.out / "results.jsonl", o.out / "leases.jsonl"};
  std::vector<int> slots(static_cast<std::size_t>(o.world));
  for (int i = 0; i < o.world; ++i) slots[static_cast<std::size_t>(i)] = i;
  scheduler::gpu_scheduler unused(slots);
  runner(prep, unused).run();
}

bool names_gpus(const std::vector<std::string>& options) {
  for (const auto& opt : options)
    for (const char* key : {"--gres", "--gpus", "-G", "--exclusive", "--gpus-per"})
      if (opt.rfind(key, 0) == 0) return true;
  return false;
}

int merge_now(const run_options& o, const run_status& st) {
  const auto suite = bench::load_suite(o.suite.empty() ? bench::default_suite_dir() : o.suite);
  const merge_summary m = merge_run(o.out, st, suite);
  fmt::print("{}: nothing to submit: {} of {} episodes scored, {} infrastructure failure(s); merged into {}\n",
             o.out.string(), m.scored, m.episodes, m.infrastructure, (o.out / "results.jsonl").string());
  return 0;
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::vector<std::string> placement_options(const std::vector<std::string>& shard_options) {
  static const std::vector<std::string> keys = {"--partition", "-p", "--account", "-A", "--qos", "-q",
                                                "--reservation", "--clusters", "-M"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < shard_options.size(); ++i) {
    const std::string& opt = shard_options[i];
    for (const auto& key : keys) {
      if (opt == key && i + 1 < shard_options.size()) {
        out.insert(out.end(), {opt, shard_options[++i]});
        break;
      }
      if (opt.rfind(key + "=", 0) == 0) {
        out.push_back(opt);
        break;
      }
    }
  }
  return out;
}

std::vector<std::string> shard_arguments(const std::vector<std::string>& run_arguments) {
  static const std::set<std::string> with_value = {"--shards", "--slurm-opt", "--slurm-merge-opt"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < run_arguments.size(); ++i) {
    const std::string& a = run_arguments[i];
    if (a == "--slurm") continue;
    if (with_value.count(a)) {
      ++i;
      continue;
    }
    const auto eq = a.find('=');
    if (eq != std::string::npos && (with_value.count(a.substr(0, eq)) || a.substr(0, eq) == "--slurm")) continue;
    out.push_back(a);
  }
  return out;
}

std::vector<std::string> own_run_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> argv;
  std::string word;
  while (std::getline(in, word, '\0')) argv.push_back(word);
  auto run = std::find(argv.begin() + std::min<std::ptrdiff_t>(1, static_cast<std::ptrdiff_t>(argv.size())),
                       argv.end(), "run");
  if (run == argv.end()) throw std::logic_error("own_run_arguments: not started as `pkagent run`");
  return {run + 1, argv.end()};
}

int submit_to_slurm(const run_options& o, const slurm_request& request) {
  prepare(o);
  const stored_plan plan = read_plan(o.out);
  const auto record = read_slurm_record(o.out);
  if (record && request.shards && *request.shards != record->shards)
    throw std::invalid_argument(fmt::format("{} was submitted as {} shards; resubmit with --shards {} (or without "
                                            "--shards) so that every episode keeps its shard",
                                            o.out.string(), record->shards, record->shards));
  const int count = request.shards        ? *request.shards
                    : record              ? record->shards
                                          : static_cast<int>(plan.problems.size());
  if (count < 1) throw std::invalid_argument("--shards must be at least 1");
  if (o.max_dollars) {
    const double spent = run_dollars(o.out, plan.run_id);
    if (spent >= *o.max_dollars) {
      fmt::print(stderr, "pkagent run: the run has spent ${:.2f} of its --max-dollars {:.2f}: nothing submitted; "
                         "raise --max-dollars to go on\n", spent, *o.max_dollars);
      return 1;
    }
  }

  const run_status st = read_status(o.out, count);
  std::vector<int> to_submit;
  std::set<std::string> live_arrays;
  int missing = 0;
  for (const auto& s : st.shards) {
    if (s.phase == shard_phase::pending || s.phase == shard_phase::running) {
      if (!s.job.empty()) live_arrays.insert(s.job.substr(0, s.job.find('_')));
    } else if (s.has_missing()) {
      to_submit.push_back(s.id.index);
      missing += s.episodes - s.scored;
    }
  }
  if (to_submit.empty()) {
    if (live_arrays.empty()) return merge_now(o, st);
    fmt::print("{}: nothing to submit: the shards with missing episodes are queued or running (array job(s) {})\n"
               "follow: pkagent run --status {}\n",
               o.out.string(), fmt::join(live_arrays, ", "), o.out.string());
    return 0;
  }
  if (o.device == bench::device_kind::cuda && !names_gpus(request.shard_options))
    fmt::print(stderr, "pkagent run: note: no GPU option among --slurm-opt: each task gets the GPUs Slurm gives a "
                       "job by default (often none); e.g. --slurm-opt=--gres=gpu:8 --slurm-opt=--exclusive\n");

  const fs::path dir = slurm_dir(o.out);
  fs::create_directories(dir / "logs");
  const fs::path pkagent = fs::read_symlink("/proc/self/exe");
  const fs::path cwd = fs::current_path();
  write_script(dir / "shard.sh", shard_script(pkagent, request.run_arguments, count));
  write_script(dir / "merge.sh", merge_script(pkagent, o.out, o.suite));
  const std::string name = fs::absolute(o.out).lexically_normal().filename().string();

  std::vector<std::string> array_options = {"--array=" + array_spec(to_submit), "--job-name=pkagent-" + name,
                                            "--output=" + (fs::absolute(dir) / "logs" / "shard-%a.%A.out").string(),
                                            "--chdir=" + cwd.string()};
  array_options.insert(array_options.end(), request.shard_options.begin(), request.shard_options.end());
  const std::string array_job = sbatch(array_options, fs::absolute(dir / "shard.sh"));
  slurm_record updated = record.value_or(slurm_record{count, {}});
  updated.submissions.push_back({array_job, to_submit, "", unix_now()});
  write_slurm_record(o.out, updated);

  std::string after = "afterany:" + array_job;
  for (const auto& live : live_arrays) after += ":" + live;
  std::vector<std::string> merge_options = {"--dependency=" + after, "--job-name=pkagent-merge-" + name,
                                            "--output=" + (fs::absolute(dir) / "logs" / "merge.%j.out").string(),
                                            "--chdir=" + cwd.string()};
  const auto extra = request.merge_options.empty() ? placement_options(request.shard_options) : request.merge_options;
  merge_options.insert(merge_options.end(), extra.begin(), extra.end());
  std::string merge_job;
  try {
    merge_job = sbatch(merge_options, fs::absolute(dir / "merge.sh"));
  } catch (const slurm_error& e) {
    fmt::print(stderr, "pkagent run: shards submitted as array job {}, but the merge job was refused: {}\n"
                       "merge by hand once they end: pkagent run --merge {}\n", array_job, e.what(), o.out.string());
    return 1;
  }
  updated.submissions.back().merge_job = merge_job;
  write_slurm_record(o.out, updated);

  fmt::print("{}: submitted shard(s) {} of {} ({} episode(s) to run) as array job {}, and merge job {} after it\n"
             "follow:  pkagent run --status {}   (squeue -j {},{}; logs in {})\n"
             "results: {} and {}, written by job {}\n"
             "resume:  rerun this command; only shards with missing episodes are submitted again\n",
             o.out.string(), array_spec(to_submit), count, missing, array_job, merge_job, o.out.string(), array_job,
             merge_job, (dir / "logs").string(), (o.out / "results.jsonl").string(), (o.out / "report.md").string(),
             merge_job);
  std::fflush(stdout);
  return 0;
}

}  // namespace pk::run
