// The red-team set against the real judge: every proof-of-concept hack of hacks/manifest.toml
// through `pkagent eval` (bwrap sandbox, world 2, a non-default seed), each with the outcome that
// counts as caught, and the honest candidates (references, experts) that must stay `correct`.
// One binary per set (PKAGENT_HACK_SET): quick (label cpu, in CI), full (label hacks_full, runs
// when PKAGENT_HACKS_FULL=1) and gpu (label gpu: at as many GPUs as the host has, up to the entry's
// world and down to its min_world, below which it skips). Run a binary directly to get the
// scoreboard table at its end; PKAGENT_HACKS_SCOREBOARD=FILE appends one JSON line per evaluation.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "bench/eval/evaluate.h"
#include "eval_runner.h"
#include "hack_manifest.h"
#include "sandbox/gpu_devices.h"
#include "sandbox/sandbox.h"

namespace pk::bench::testing {
namespace {

namespace fs = std::filesystem;

struct scoreboard_row {
  std::string name, family, expect, verdict, speedup, why;
  bool caught = false;
  double wall_s = 0;
};

std::vector<scoreboard_row>& rows() {
  static std::vector<scoreboard_row> r;
  return r;
}

// Honest candidates are judged right or get a false positive; hacks are caught or not.
std::string judged(const scoreboard_row& r) {
  if (r.expect == "correct") return r.caught ? "ok" : "FALSE POS";
  return r.caught ? "caught" : "NOT CAUGHT";
}

std::string row_line(const scoreboard_row& r) {
  return fmt::format("| {:<36} | {:<30} | {:<9} | {:<22} | {:>9} | {:<10} | {:>5.0f} s | {}", r.name, r.family,
                     r.expect, r.verdict, r.speedup, judged(r), r.wall_s, r.why);
}

// Prints every row this process judged, with the totals, after the last test.
class scoreboard : public ::testing::Environment {
 public:
  void TearDown() override {
    if (rows().empty()) return;
    std::cout << "\nred-team scoreboard (" << PKAGENT_HACK_SET << " set)\n"
              << fmt::format("| {:<36} | {:<30} | {:<9} | {:<22} | {:>9} | {:<10} | {:>7} | why\n", "candidate", "family",
                             "expect", "verdict", "speedup", "judged", "wall");
    int caught = 0;
    double wall = 0;
    for (const auto& r : rows()) {
      std::cout << row_line(r) << "\n";
      caught += r.caught;
      wall += r.wall_s;
    }
    std::cout << fmt::format("{} of {} judged as expected; {:.0f} s of evaluations\n", caught, rows().size(), wall);
  }
};

[[maybe_unused]] const ::testing::Environment* const registered = ::testing::AddGlobalTestEnvironment(new scoreboard);

const std::vector<hack_entry>& entries() {
  static const std::vector<hack_entry> all = [] {
    std::vector<hack_entry> chosen;
    for (auto& e : load_hack_manifest(test_data("hacks/manifest.toml"), source_root()))
      if (e.set == PKAGENT_HACK_SET) chosen.push_back(std::move(e));
    return chosen;
  }();
  return all;
}

// The evaluations' HOME: the judge's caches live at their default place under it (as on a user's
// machine), shared by every test of every set so that each reference runs once per seed.
fs::path hack_home() { return fs::path(PKAGENT_HACK_HOME); }

hack_outcome evaluate_once(const hack_entry& e, int step) {
  const int min_calls = e.step_min_calls.empty() ? e.min_calls : e.step_min_calls.at(static_cast<std::size_t>(step));
  std::vector<std::string> args = {"eval", "-q", "--json", "--problem", std::to_string(e.problem), "--solution",
                                   e.file.string(), "--world", std::to_string(e.world), "--device", to_string(e.device),
                                   "--seed", std::to_string(e.seed), "--trials", std::to_string(e.trials),
                                   "--min-calls", std::to_string(min_calls), "--timeout",
                                   fmt::format("{:g}", e.timeout_s), "--compile-timeout",
                                   fmt::format("{:g}", e.compile_timeout_s)};
  args.insert(args.end(), e.args.begin(), e.args.end());
  fs::create_directories(hack_home() / ".cache" / "pkagent");  // bwrap mounts its tmpfs over HOME
  run_options o;
  o.env = {{"HOME", hack_home().string()},
           {"PKAGENT_CACHE", (hack_home() / ".cache" / "pkagent").string()},
           {"XDG_CACHE_HOME", ""}};
  o.timeout = std::chrono::milliseconds(static_cast<long long>(e.wall_limit_s * 1000));
  const eval_run r = run_pkagent(args, o);
  hack_outcome out;
  out.exit_code = r.exit_code;
  out.hung = r.timed_out;
  out.wall_s = r.wall_seconds;
  if (r.report.is_object()) {
    out.verdict = r.report.value("verdict", "");
    if (r.report.contains("reason") && r.report["reason"].is_string()) out.reason = r.report["reason"];
    out.message = r.report.value("message", "");
    if (r.report.contains("speedup") && r.report["speedup"].is_number()) out.speedup = r.report["speedup"].get<double>();
  } else {
    out.message = r.err.size() > 600 ? "..." + r.err.substr(r.err.size() - 600) : r.err;
  }
  return out;
}

void record(const hack_entry& e, const hack_outcome& o, const judgement& j) {
  std::string why = j.why.substr(0, 200);
  std::replace(why.begin(), why.end(), '\n', ' ');
  scoreboard_row r{e.name,
                   e.family == 0 ? e.family_name : fmt::format("{} {}", e.family, e.family_name),
                   to_string(e.expect),
                   o.hung                 ? "(hung)"
                   : o.verdict.empty()    ? fmt::format("(exit {})", o.exit_code)
                   : o.reason.empty()     ? o.verdict
                                          : fmt::format("{} ({})", o.verdict, o.reason),
                   o.speedup ? fmt::format("{:.2f}x", *o.speedup) : "-",
                   why,
                   j.caught,
                   o.wall_s};
  std::cout << row_line(r) << std::endl;
  if (const char* file = std::getenv("PKAGENT_HACKS_SCOREBOARD"); file && *file) {
    nlohmann::json line = {{"candidate", e.name},  {"family", e.family},   {"expect", r.expect},
                           {"verdict", r.verdict}, {"reason", o.reason}, {"exit_code", o.exit_code},
                           {"caught", j.caught},         {"world", e.world},
                           {"why", j.why},         {"wall_s", o.wall_s}, {"device", e.device}};
    line["speedup"] = o.speedup ? nlohmann::json(*o.speedup) : nlohmann::json(nullptr);
    std::ofstream(file, std::ios::app) << line.dump() << "\n";
  }
  rows().push_back(std::move(r));
}

// A correct reading within a factor 2 of its bound may be the shared machine's noise (on a loaded
// 2-core host, honest references have read 0.66-2.09x): two more evaluations decide.
bool ambiguous(const hack_entry& e, const hack_outcome& o, const judgement& j) {
  if (j.caught || o.verdict != "correct" || !o.speedup) return false;
  if (e.expect == expectation::no_gain) return *o.speedup <= 2 * e.max_speedup;
  if (e.expect == expectation::correct) return *o.speedup >= e.min_speedup / 2 && *o.speedup <= 2 * e.max_speedup;
  return false;
}

// Of several evaluations: the first that is not `correct` (the judge caught it, or a false
// positive), else the one with the median speedup; its wall time is the sum.
hack_outcome combined(std::vector<hack_outcome> runs) {
  double wall = 0;
  for (const auto& r : runs) wall += r.wall_s;
  auto pick = std::find_if(runs.begin(), runs.end(), [](const hack_outcome& r) { return r.verdict != "correct"; });
  if (pick == runs.end()) {
    std::sort(runs.begin(), runs.end(),
              [](const hack_outcome& a, const hack_outcome& b) { return a.speedup.value_or(0) < b.speedup.value_or(0); });
    pick = runs.begin() + static_cast<long>(runs.size() / 2);
  }
  hack_outcome o = *pick;
  o.wall_s = wall;
  return o;
}

class hack_poc : public ::testing::TestWithParam<hack_entry> {};

}  // namespace

// How gtest names a parameter in its messages.
void PrintTo(const hack_entry& e, std::ostream* os) { *os << e.name << " (family " << e.family << ")"; }

namespace {

TEST_P(hack_poc, judged_as_expected) {
  const hack_entry& entry = GetParam();
  if (entry.set == "full") {
    const char* full = std::getenv("PKAGENT_HACKS_FULL");
    if (!full || std::string(full) != "1")
      GTEST_SKIP() << "the full red-team set runs with PKAGENT_HACKS_FULL=1 (ctest -L hacks_full); CI runs the "
                      "quick set";
  }
  if (auto why = sandbox::unavailable_reason()) GTEST_SKIP() << "the sandbox cannot run here: " << *why;
  const int gpus = entry.device == bench::device_kind::cuda ? sandbox::visible_gpu_count() : 0;
  const std::optional<int> world = world_on_host(entry, gpus);
  if (!world) GTEST_SKIP() << "needs " << entry.min_world << " GPUs; this machine has " << gpus;
  hack_entry e = entry;
  e.world = *world;
  // PKAGENT_HACKS_WORLD=N: the CPU entries at N ranks instead of their manifest's world (CI runs them
  // at the manifest's; the judge must hold at every world size the problems allow).
  if (const char* w = std::getenv("PKAGENT_HACKS_WORLD"); w && *w && e.device == bench::device_kind::cpu) {
    char* end = nullptr;
    const long n = std::strtol(w, &end, 10);
    ASSERT_TRUE(*end == '\0' && n >= 1 && n <= 64) << "PKAGENT_HACKS_WORLD='" << w << "' is not a world size (1-64)";
    e.world = static_cast<int>(n);
  }
  hack_outcome o;
  for (int step = 0; step < e.steps; ++step) o = evaluate_once(e, step);
  judgement j = judge_outcome(e, o);
  if (ambiguous(e, o, j)) {
    const int last = e.steps - 1;
    o = combined({o, evaluate_once(e, last), evaluate_once(e, last)});
    j = judge_outcome(e, o);
    j.why += " (median of 3 evaluations)";
  }
  record(e, o, j);
  EXPECT_TRUE(j.caught) << e.file.filename().string() << " on problem " << e.problem << " at W=" << e.world
                        << " (family " << e.family << ", " << e.family_name << ", expected " << to_string(e.expect)
                        << "): " << j.why;
}

// The prefix names the set: an entry in two sets gets two distinct ctest names, so each keeps only its
// own set's labels (ctest labels tests by name, and a shared name took the other set's label).
INSTANTIATE_TEST_SUITE_P(PKAGENT_HACK_PREFIX, hack_poc, ::testing::ValuesIn(entries()),
                         [](const ::testing::TestParamInfo<hack_entry>& info) { return info.param.name; });

}  // namespace
}  // namespace pk::bench::testing
