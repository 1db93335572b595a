// The handlers of the pkb commands (the table is commands.h, which also answers `help`). Each answers one request with
// text shaped for the model; those that lease GPUs run with the request's lease.
#pragma once

#include "agent/run/pkb_tool/request.h"

namespace pk::pkb {

/// `check`: the visible trials of solution.py, with a diff summary.
reply check_solution(const context& ctx, request& req);
/// `bench`: one timed trial against the reference.
reply bench_solution(const context& ctx, request& req);
/// `submit`: the check, then whether the solution is ready to submit.
reply submit_solution(const context& ctx, request& req);
/// `profile`: one visible trial under Nsight Compute, summarised per kernel.
reply profile_solution(const context& ctx, request& req);
/// `run -- CMD...`: CMD in a fresh sandbox with the lease's GPUs.
reply run_in_sandbox(const context& ctx, request& req);

}  // namespace pk::pkb
