// The report on the fixture runs (fixture/agent, fixture/zeroshot), checked against values worked
// out by hand; the derivation is in tests/metrics/aggregate_test.cc.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bench/report/document.h"
#include "bench/report/html.h"
#include "bench/report/markdown.h"
#include "bench/report/run_set.h"
#include "../metrics/sample_result.h"
#include "config/read_file.h"

namespace {

using namespace pk::report;
namespace fs = std::filesystem;

const fs::path fixture = fs::path(PKAGENT_TEST_DATA) / "fixture";

std::string markdown_of_fixture() {
  auto set = load_runs({fixture / "agent", fixture / "zeroshot" / "results.jsonl"}, {});
  return render_markdown(build_document(set));
}

// The cells of the first table row whose first cell is `first` after `after` (a heading).
std::vector<std::string> row(const std::string& md, const std::string& first, const std::string& after = "") {
  auto from = after.empty() ? 0 : md.find(after);
  EXPECT_NE(from, std::string::npos) << after;
  auto at = md.find("\n| " + first + " |", from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "no row " << first << " after " << after;
    return {};
  }
  auto end = md.find('\n', at + 1);
  std::string line = md.substr(at + 1, end - at - 1);
  std::vector<std::string> cells;
  std::stringstream in(line.substr(1));
  std::string c;
  while (std::getline(in, c, '|')) cells.push_back(c.substr(1, c.size() >= 2 ? c.size() - 2 : 0));
  return cells;
}

// "66.7% [25.0, 100.0]" starts with "66.7% ["
#define EXPECT_STARTS(cell, prefix) EXPECT_EQ((cell).substr(0, std::string(prefix).size()), prefix) << (cell)

TEST(report, overall_numbers_match_hand_computed_values) {
  auto md = markdown_of_fixture();
  auto solved = row(md, "problems solved (any sample correct)");
  ASSERT_EQ(solved.size(), 3u);
  EXPECT_EQ(solved[1], "3/4");
  EXPECT_EQ(solved[2], "2/4");
  const char* agent_pass[] = {"50.0% [", "66.7% [", "75.0% ["};
  const char* zeroshot_pass[] = {"25.0% [", "41.7% [", "50.0% ["};
  const char* agent_fast[] = {"25.0% [", "41.7% [", "50.0% ["};
  const char* zeroshot_fast[] = {"8.3% [", "16.7% [", "25.0% ["};
  for (int k = 1; k <= 3; ++k) {
    auto p = row(md, "pass@" + std::to_string(k));
    ASSERT_EQ(p.size(), 3u);
    EXPECT_STARTS(p[1], agent_pass[k - 1]);
    EXPECT_STARTS(p[2], zeroshot_pass[k - 1]);
    auto f = row(md, "fast_1@" + std::to_string(k));
    ASSERT_EQ(f.size(), 3u);
    EXPECT_STARTS(f[1], agent_fast[k - 1]);
    EXPECT_STARTS(f[2], zeroshot_fast[k - 1]);
  }
  EXPECT_STARTS(row(md, "fast_1.5")[1], "16.7% [");
  EXPECT_STARTS(row(md, "fast_2")[1], "8.3% [");
  EXPECT_STARTS(row(md, "geomean speedup (correct)")[1], "1.22x [");  // (1.129 * 1.474 * 1.1)^(1/3)
  EXPECT_STARTS(row(md, "geomean speedup (correct)")[2], "1.08x [");  // (1.0 * 1.168)^(1/2)
  EXPECT_EQ(row(md, "dollars per problem")[1], "$0.300");
  EXPECT_EQ(row(md, "dollars per success")[1], "$0.200");
  EXPECT_EQ(row(md, "dollars per success")[2], "$0.040");
  EXPECT_EQ(row(md, "tokens per problem")[1], "36.0k");
  EXPECT_EQ(row(md, "tokens per success")[2], "16.0k");
  EXPECT_EQ(row(md, "leased (per problem)")[1], "120.0 GPU-s (30.0)");
  EXPECT_EQ(row(md, "fraction of roofline bound (median, correct)")[1], "20.0%");
  EXPECT_EQ(row(md, "fraction of roofline bound (median, correct)")[2], "20.0%");  // 0.4, 0.2, 0.2
  EXPECT_EQ(row(md, "wall time in all (episodes with final scoring)")[1], "1440.0 s");
  EXPECT_EQ(row(md, "agent · demo")[3], "cuda (GPUs)");
}

TEST(report, agent_against_zeroshot_at_equal_k_and_equal_spend) {
  auto md = markdown_of_fixture();
  const std::string section = "## agent · demo against zeroshot · demo";
  ASSERT_NE(md.find(section), std::string::npos);
  auto k2 = row(md, "2", section);
  ASSERT_EQ(k2.size(), 7u);
  EXPECT_EQ(k2[1], "66.7%");
  EXPECT_EQ(k2[2], "41.7%");
  EXPECT_STARTS(k2[3], "+25.0 pp [");
  EXPECT_EQ(k2[4], "41.7%");
  EXPECT_EQ(k2[5], "16.7%");
  // $0.03 buys zero-shot 3 samples and the agent none; $0.10 buys the agent one and zero-shot 10,
  // more than it has.
  EXPECT_NE(md.find("an episode costs $0.100 on average for agent · demo and $0.010 for zeroshot · demo"),
            std::string::npos);
  auto cheap = row(md, "$0.030", section);
  ASSERT_EQ(cheap.size(), 6u);
  EXPECT_EQ(cheap[1], "0");
  EXPECT_EQ(cheap[2], "0.0%");
  EXPECT_EQ(cheap[3], "3");
  EXPECT_EQ(cheap[4], "50.0%");
  EXPECT_STARTS(cheap[5], "-50.0 pp [");
  auto dear = row(md, "$0.100", section);
  ASSERT_EQ(dear.size(), 6u);
  EXPECT_EQ(dear[2], "50.0%");
  EXPECT_EQ(dear[3], "10");
  EXPECT_EQ(dear[4], "—");
}

TEST(report, tables_per_category_and_per_problem) {
  auto md = markdown_of_fixture();
  auto prim = row(md, "agent · demo", "### Primitive collectives (primitive)");
  ASSERT_EQ(prim.size(), 14u);
  EXPECT_EQ(prim[10], "20.0%");  // median of 0.4, 0.4, 0.2, 0.2, 0.2
  EXPECT_EQ(prim[13], "60.0");  // GPU-s, as the column header says
  EXPECT_EQ(prim[1], "2");
  EXPECT_EQ(prim[2], "2/2");
  EXPECT_STARTS(prim[3], "83.3% [");  // (2/3 + 3/3) / 2
  EXPECT_EQ(prim[7], "83.3% · 100.0% · 100.0%");
  EXPECT_NE(md.find("### GEMM + communication (gemm_comm)"), std::string::npos);
  EXPECT_NE(md.find("### Mixture of experts (moe)"), std::string::npos);
  EXPECT_EQ(md.find("### Optimizer"), std::string::npos);  // no such problem in the runs

  auto p1 = row(md, "1_allreduce", "## Per problem");
  ASSERT_EQ(p1.size(), 17u);
  EXPECT_EQ(p1[2], "agent · demo");
  EXPECT_EQ(p1[4], "2/3");
  EXPECT_EQ(p1[5], "1/3 · 0/3 · 0/3");  // 1.25 beats its noise (5%), 1.02 does not
  EXPECT_EQ(p1[6], "66.7% · 100.0% · 100.0%");
  EXPECT_EQ(p1[8], "1.13x");  // sqrt(1.25 * 1.02)
  EXPECT_EQ(p1[9], "40.0%");  // 0.2 ms bound / 0.5 ms
  EXPECT_EQ(p1[10], "±5.0%");
  EXPECT_EQ(p1[11], "correct 2, mismatch 1");
  EXPECT_EQ(p1[12], "submitted 3");
  EXPECT_EQ(p1[15], "$0.150");
  EXPECT_EQ(row(md, "episodes ended by (end reasons)")[1], "submitted 11, step_limit 1");
  auto p13 = row(md, "13_gemm_allreduce", "## Per problem");
  EXPECT_EQ(p13[6], "0.0% · 0.0% · 0.0%");
  EXPECT_EQ(p13[8], "—");
  EXPECT_EQ(p13[9], "—");
}

// A local model on CPU: one sample, no prices, a long model name.
TEST(report, a_cpu_run_of_an_unpriced_local_model) {
  auto set = load_runs({fixture / "agent", fixture / "local_cpu"}, {});
  ASSERT_EQ(set.runs.size(), 2u);
  EXPECT_EQ(set.runs[1].label, "agent · Qwen2.5-Coder-32B-Ins…") << "an openai-compatible model by its short id";
  const auto md = render_markdown(build_document(set));
  const std::string cpu = set.runs[1].label;
  EXPECT_EQ(row(md, cpu)[3], "cpu (gloo)");
  EXPECT_EQ(row(md, "leased (per problem)")[2], "8.0 CPU slot-s (4.0)") << "a CPU run leased no GPU";
  EXPECT_EQ(md.find("GPU-seconds"), std::string::npos);
  EXPECT_EQ(row(md, "dollars in all")[2], "unknown") << "no prices is not $0";
  EXPECT_EQ(row(md, "dollars per problem")[2], "unknown");
  EXPECT_EQ(row(md, "fraction of roofline bound (median, correct)")[2], "—") << "no bound on CPU";
  // The runs lease different things: the per-problem column says which in each cell.
  auto p1 = row(md, "1_allreduce", "## Per problem");
  EXPECT_EQ(p1[16], "30.0 GPU-s");
  // A context overflow is not hidden among the failures: the end reasons say how each episode ended.
  EXPECT_EQ(row(md, "episodes ended by (end reasons)")[2], "context_overflow 1, step_limit 1");
  EXPECT_NE(md.find("| context_overflow 1 |", md.find("## Per problem")), std::string::npos);
}

TEST(report, charts_say_one_sample_instead_of_an_empty_frame) {
  auto set = load_runs({fixture / "local_cpu"}, {});
  const std::string html = render_html(build_document(set), set);
  std::size_t notes = 0;
  for (auto at = html.find("class=\"chart note\""); at != std::string::npos; at = html.find("class=\"chart note\"", at + 1))
    ++notes;
  EXPECT_EQ(notes, 2u) << "pass@k and spend curves over k = 1 alone";
  EXPECT_NE(html.find("One sample per problem"), std::string::npos);
  EXPECT_NE(html.find("agent · Qwen2.5-Coder-32B-Ins…: pass@1 50.0%, fast_1@1 0.0%, 34.0k tokens per problem"),
            std::string::npos);
  // With more samples the curves are drawn.
  auto three = load_runs({fixture / "agent"}, {});
  EXPECT_EQ(render_html(build_document(three), three).find("chart note"), std::string::npos);
}

TEST(report, labels_are_given_or_short_and_unique) {
  auto set = load_runs({fixture / "agent", fixture / "zeroshot"}, {}, {"A", "Z"});
  EXPECT_EQ(set.runs[0].label, "A");
  EXPECT_EQ(set.runs[1].label, "Z");
  EXPECT_NE(render_markdown(build_document(set)).find("## A against Z"), std::string::npos);
  EXPECT_THROW(load_runs({fixture / "agent"}, {}, {"A", "B"}), std::runtime_error);
  // Two runs of the same model get numbered, not their long run ids appended.
  auto twice = load_runs({fixture / "agent", fixture / "agent"}, {});
  EXPECT_EQ(twice.runs[0].label, "agent · demo");
  EXPECT_EQ(twice.runs[1].label, "agent · demo #2");
}

TEST(report, malformed_lines_are_listed_with_file_and_line) {
  auto md = markdown_of_fixture();
  auto at = md.find("## Skipped lines");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(md.find((fixture / "agent" / "results.jsonl").string() +
                        ":5: problem.category: \"gemm\" is not one of primitive, gemm_comm, fused, moe, "
                        "sequence_parallel, optimizer, domain",
                    at),
            std::string::npos);
}

TEST(report, infrastructure_failures_get_both_rates) {
  // Problem 1 correct twice; problem 2 correct once, and once lost with its node.
  using pk::metrics::testing::sample_result;
  auto lost = sample_result(2, 1);
  lost.verdict = std::string(pk::metrics::infrastructure_verdict);
  lost.correct = false;
  lost.speedup = lost.noise = std::nullopt;
  std::vector<pk::metrics::episode_result> results = {sample_result(1, 0), sample_result(1, 1), sample_result(2, 0),
                                                      lost};
  auto summary = pk::metrics::summarize(results, {}).at(0);
  auto md = render_markdown(build_document(make_run_set({{"run", summary}}, {})));
  EXPECT_EQ(row(md, "infrastructure failures (episodes not run; counted as failures above)").at(1), "1");
  EXPECT_STARTS(row(md, "correct (per sample)").at(1), "75.0% [");
  EXPECT_STARTS(row(md, "correct (per sample), infrastructure failures excluded").at(1), "100.0% [");
  EXPECT_STARTS(row(md, "pass@1, infrastructure failures excluded").at(1), "100.0% [");
  // A run without them shows no such rows.
  results.pop_back();
  summary = pk::metrics::summarize(results, {}).at(0);
  EXPECT_EQ(render_markdown(build_document(make_run_set({{"run", summary}}, {}))).find("infrastructure"),
            std::string::npos);
}

TEST(report, forbidden_verdicts_are_counted_per_run_by_reason) {
  using pk::metrics::testing::sample_result;
  const auto caught = pk::metrics::testing::forbidden_result;
  auto clean = sample_result(1, 0);
  clean.model = "clean";
  const std::vector<pk::metrics::episode_result> results = {caught(1, 0, "tampering"), caught(1, 1, "tampering"),
                                                            caught(2, 0, "background"), sample_result(2, 1), clean};
  const auto runs = pk::metrics::summarize(results, {});
  const auto md = render_markdown(build_document(make_run_set({{"hacker", runs.at(0)}, {"clean", runs.at(1)}}, {})));
  EXPECT_EQ(row(md, "forbidden verdicts (hacks the judge caught)"),
            (std::vector<std::string>{"forbidden verdicts (hacks the judge caught)", "3", "0"}))
      << "counted per run (a row per reason below); the clean run reads 0";
  EXPECT_EQ(row(md, "forbidden: tampering").at(1), "2");
  EXPECT_EQ(row(md, "forbidden: background").at(1), "1");
  EXPECT_EQ(row(md, "forbidden: tampering").at(2), "0");
  EXPECT_NE(md.find("forbidden (tampering) 2"), std::string::npos) << "the per-problem verdicts name the reason";
  // A run set without any: the count row reads 0, no row per reason.
  const auto quiet = render_markdown(build_document(make_run_set({{"clean", runs.at(1)}}, {})));
  EXPECT_EQ(row(quiet, "forbidden verdicts (hacks the judge caught)").at(1), "0");
  EXPECT_EQ(quiet.find("forbidden:"), std::string::npos);
}

TEST(report, same_seed_same_report) { EXPECT_EQ(markdown_of_fixture(), markdown_of_fixture()); }

TEST(report, unreadable_runs_are_named) {
  try {
    load_runs({fixture / "no-such-run"}, {});
    FAIL() << "a missing run directory was accepted";
  } catch (const std::invalid_argument& e) {  // bad input: exit status 2 in the CLI
    EXPECT_NE(std::string(e.what()).find("no-such-run/results.jsonl: no such file"), std::string::npos) << e.what();
  }
}

// The real binary: markdown on stdout, the skipped-line count on stderr, exit codes.
struct command_output {
  int status = -1;
  std::string out;
};
command_output run(const std::string& args) {
  auto cmd = std::string(PKAGENT_BIN_DIR) + "/pkagent report " + args;
  command_output r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) r.out.append(buf, n);
  int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(report_command, prints_the_report_and_fails_cleanly_on_bad_input) {
  ASSERT_TRUE(fs::exists(fs::path(PKAGENT_BIN_DIR) / "pkagent")) << "build the pkagent target first";
  auto dir = fs::temp_directory_path() / ("pk_report_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto ok = run((fixture / "agent").string() + " " + (fixture / "zeroshot" / "results.jsonl").string() + " --html " +
                (dir / "r.html").string() + " 2>" + (dir / "err").string());
  EXPECT_EQ(ok.status, 0);
  EXPECT_EQ(ok.out, markdown_of_fixture());
  EXPECT_TRUE(fs::file_size(dir / "r.html") > 10000);
  const std::string err_text = pk::read_file(dir / "err");
  EXPECT_NE(err_text.find("pkagent report: 1 malformed result line(s) left out; the first: "), std::string::npos)
      << err_text;

  fs::create_directories(dir / "empty-run");
  auto missing = run((dir / "empty-run").string() + " 2>&1");
  EXPECT_EQ(missing.status, 2);  // bad input, as for every command
  EXPECT_NE(missing.out.find("pkagent report: " + (dir / "empty-run" / "results.jsonl").string() + ": no such file"),
            std::string::npos)
      << missing.out;
  auto usage = run("2>&1");
  EXPECT_EQ(usage.status, 2);
  EXPECT_NE(usage.out.find("RUN_DIR is required"), std::string::npos) << usage.out;
  fs::remove_all(dir);
}

}  // namespace
