#include "bench/eval/failure_verdict.h"

#include <fmt/format.h>

namespace pk::bench {

namespace {

std::string tail(const std::string& s, std::size_t n = 4000) {
  return s.size() <= n ? s : "..." + s.substr(s.size() - n);
}

const rank_exit* exit_of(const rank_set_ending& e, int rank) {
  if (!e.ranks) return nullptr;
  for (const auto& r : e.ranks->ranks)
    if (r.rank == rank) return &r;
  return nullptr;
}

std::string log_of(const rank_set_ending& e, int rank) {
  const rank_exit* x = exit_of(e, rank);
  if (!x) return tail(e.sandbox.err.text + e.sandbox.out.text);
  return tail(x->stderr_text + x->stdout_text);
}

}  // namespace

failure_verdict verdict_for(const rank_failure& f, const rank_set_ending& ending) {
  failure_verdict out;
  out.log = f.rank >= 0 ? log_of(ending, f.rank) : "";
  switch (f.what) {
    case rank_failure::kind::timeout:
      out.v = verdict::timeout;
      out.message = fmt::format(
          "rank {} spent more than {:g} s in phase '{}' (a hung collective or an endless loop); all ranks were "
          "killed",
          f.rank, f.limit_s, f.phase);
      return out;
    case rank_failure::kind::tampered:
      out.v = verdict::forbidden;
      out.reason = forbidden_reason::tampering;
      out.message = fmt::format("during '{}': {}{}", f.phase, f.rank >= 0 ? fmt::format("rank {} ", f.rank) : "",
                                f.message);
      return out;
    case rank_failure::kind::reported:
      if (f.worker_kind == "import_error" || f.worker_kind == "no_solution") {
        out.v = verdict::compile_error;
        out.log.clear();
      } else if (f.worker_kind == "multicast") {
        // The rank's own report against itself: NVLink multicast switched back on.
        out.v = verdict::forbidden;
        out.reason = forbidden_reason::multicast;
        out.log.clear();
      } else if (f.worker_kind == "bad_output") {
        out.v = verdict::mismatch;
        out.log.clear();
      } else {
        out.v = verdict::runtime_error;
      }
      if (f.worker_kind == "harness_error")
        out.message = fmt::format("rank {} failed in the evaluator's own code during '{}' (the candidate may have "
                                  "broken torch or the process state): {}",
                                  f.rank, f.phase, tail(f.message, 6000));
      else
        out.message = fmt::format("rank {}: {}", f.rank, tail(f.message, 6000));
      return out;
    case rank_failure::kind::exited:
      break;
  }
  const rank_exit* x = exit_of(ending, f.rank);
  const bool early = f.phase == "import";
  out.v = early ? verdict::compile_error : verdict::runtime_error;
  if (!x) {
    out.message = fmt::format("rank {} stopped answering during phase '{}' and its process set ended without a "
                              "record of how (was its supervisor killed?)",
                              f.rank, f.phase);
  } else if (x->exit_code == 0 && !x->signal) {
    out.message = fmt::format("rank {} exited during phase '{}' without finishing (did the candidate call exit() "
                              "or sys.exit()?)",
                              f.rank, f.phase);
  } else if (x->killed) {
    out.message = fmt::format("rank {} was stopped during phase '{}' after another rank of its set failed", f.rank,
                              f.phase);
  } else {
    const std::string how = x->signal ? fmt::format("was killed by signal {}", x->signal)
                                      : fmt::format("exited with code {}", x->exit_code);
    out.message = fmt::format("rank {} {} during phase '{}' without reporting an error (a crash in native code?); "
                              "see its output below",
                              f.rank, how, f.phase);
  }
  return out;
}

std::string describe(const rank_failure& f, const rank_set_ending& ending) {
  const failure_verdict v = verdict_for(f, ending);
  return fmt::format("{} ({}){}", v.message, to_string(v.v), v.log.empty() ? "" : "\n" + v.log);
}

}  // namespace pk::bench
