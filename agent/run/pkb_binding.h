// How an episode's sandbox reaches its pkb server: the socket directory bound read-only at
// /run/pkb, the client binary at /run/pkb-bin/pkb, and that directory first on PATH; and what the
// server of an episode works on.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "agent/run/pkb_tool/request.h"
#include "agent/run/pkb_tool/server.h"
#include "agent/run/run_setup.h"
#include "sandbox/sandbox.h"

namespace pk::run {

/// The pkb tool of the episode of `problem` whose directory is `ep`: its workspace, its log
/// (ep/pkb.jsonl), the run's evaluator options, and leases from `gpus` charged to `who`.
pkb::context tool_context(const run_setup& setup, const bench::problem& problem, const std::filesystem::path& ep,
                          scheduler::gpu_scheduler& gpus, scheduler::holder who);

/// What the episode's transcript header records of its pkb tool (`tools.pkb`), from which a
/// replay or fork attaches it again: {"run", "problem", "suite", "hardware", "device", "world",
/// "check_trials", "gpu_seconds_cap"} (suite and hardware empty: the defaults; cap null: none).
nlohmann::json tool_record(const run_setup& setup, const bench::problem& problem);

void attach_pkb(sandbox::spec& s, const pkb::server& srv, const std::filesystem::path& pkb_binary);

}  // namespace pk::run
