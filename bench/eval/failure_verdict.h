// The verdict for a candidate whose process set failed: what the judge saw (rank_failure) and how
// its ranks ended (ranks.json, for the message only) become the verdict, its reason and message,
// and the failing rank's output. Every failure of the candidate's set is a verdict, never an
// error of the judge: a crash, an early exit, a hang, a killed supervisor, a forged message.
#pragma once

#include <optional>
#include <string>

#include "bench/eval/eval_report.h"
#include "bench/eval/sets/rank_set.h"

namespace pk::bench {

struct failure_verdict {
  verdict v = verdict::runtime_error;
  forbidden_reason reason = forbidden_reason::none;
  std::string message;
  std::string log;  ///< the failing rank's output tail
};

failure_verdict verdict_for(const rank_failure& f, const rank_set_ending& ending);

/// A failure's message for the judge's own error (the reference's set failed).
std::string describe(const rank_failure& f, const rank_set_ending& ending);

}  // namespace pk::bench
