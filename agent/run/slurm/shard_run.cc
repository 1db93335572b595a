#include "agent/run/slurm/shard_run.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>

#include <fmt/format.h>

#include "agent/run/atomic_file.h"
#include "agent/run/slurm/run_status.h"
#include "agent/run/slurm/slurm.h"

namespace pk::run {
namespace fs = std::filesystem;

namespace {

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Two processes running one shard would run its episodes twice: refuse while the other lives.
void refuse_if_running_elsewhere(const shard_files& f, shard_id s, const std::string& me) {
  const auto old = read_state(f.state);
  if (!old || old->state != "running") return;
  if (!old->slurm_job.empty()) {
    if (old->slurm_job == me) return;  // this very task, requeued after its node was lost
    const auto live = queued_jobs({old->slurm_job.substr(0, old->slurm_job.find('_'))});
    if (live && live->count(old->slurm_job) && live_phase(live->at(old->slurm_job)))
      throw std::invalid_argument(fmt::format("shard {} is running as Slurm job {} on {}; cancel it "
                                              "(scancel {}) or wait for it",
                                              s.text(), old->slurm_job, old->host, old->slurm_job));
    return;
  }
  if (old->host == host_name() && old->pid != ::getpid() && ::kill(static_cast<pid_t>(old->pid), 0) == 0)
    throw std::invalid_argument(
        fmt::format("shard {} is running as process {} on this host; wait for it or stop it", s.text(), old->pid));
}

}  // namespace

std::string own_slurm_job() {
  const char* array = std::getenv("SLURM_ARRAY_JOB_ID");
  const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
  return array && task ? fmt::format("{}_{}", array, task) : "";
}

run_summary run_shard(run_options o, shard_id s, scheduler::gpu_scheduler& gpus,
                      const scheduler::gpu_allocation& allocation) {
  if (const auto record = read_slurm_record(o.out); record && record->shards != s.count)
    throw std::invalid_argument(fmt::format("{} was submitted as {} shards: --shard {} does not belong to it",
                                            o.out.string(), record->shards, s.text()));
  open_run_dir(o);  // the episode -> shard mapping comes from the stored plan
  select_shard(o, s);
  const shard_files f = files_of(o.out, s);
  const std::string me = own_slurm_job();
  refuse_if_running_elsewhere(f, s, me);
  std::error_code ec;
  fs::create_directories(f.dir, ec);
  if (ec)
    throw std::runtime_error(fmt::format("shard {} cannot create its directory {}: {}; the run directory must be on "
                                         "a filesystem this node ({}) can write",
                                         s.text(), f.dir.string(), ec.message(), host_name()));

  shard_state st;
  st.state = "running";
  st.host = host_name();
  st.pid = ::getpid();
  st.slurm_job = me;
  if (o.device == bench::device_kind::cuda) {
    st.gpus = allocation.gpus;
    st.gpu_source = allocation.source;
  }
  st.started = unix_now();
  write_state(f.state, st);
  try {
    runner r(o, gpus);
    const run_summary sum = r.run();
    st.state = "finished";
    st.episodes = sum.episodes;
    st.scored = sum.finished + sum.skipped;
    st.failed = sum.failed;
    st.unstarted = sum.unstarted;
    st.ended = unix_now();
    write_state(f.state, st);
    return sum;
  } catch (const std::exception& e) {
    st.state = "failed";
    st.message = e.what();
    st.ended = unix_now();
    write_state(f.state, st);
    throw;
  }
}

}  // namespace pk::run
