// The pieces of `pkagent run` that need no process: problem lists, PROBLEM.md, solution
// extraction and the zero-shot transcript, compiler-output shaping, the profile summary, the
// wire format.
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "agent/model_choice.h"
#include "agent/run/final_score.h"
#include "agent/run/pkb_tool/commands.h"
#include "bench/suite/machine.h"
#include "agent/run/pkb_tool/compiler_output.h"
#include "agent/run/pkb_tool/profile.h"
#include "agent/run/pkb_tool/protocol.h"
#include "agent/run/pkb_tool/tool_texts.h"
#include "agent/run/problem_task.h"
#include "agent/run/run_ledger.h"
#include "agent/run/run_plan.h"
#include "agent/run/zero_shot.h"
#include "agent/scripted_client.h"
#include "agent/transcript.h"
#include "bench/suite/machine.h"
#include "bench/suite/suite.h"
#include "config/paths.h"
#include "config/read_file.h"
#include "fake_provider.h"

namespace pk::run {
namespace {

const std::vector<bench::problem>& suite() {
  static const auto s = bench::load_suite(bench::default_suite_dir());
  return s;
}

TEST(ProblemList, RangesListsAndAll) {
  EXPECT_EQ(parse_problem_list("1-4", suite()), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(parse_problem_list("13,1-2,2", suite()), (std::vector<int>{1, 2, 13}));
  // Ranges skip ids the suite does not have.
  std::vector<bench::problem> without_25;
  for (const bench::problem& p : suite())
    if (p.id != 25) without_25.push_back(p);
  EXPECT_EQ(parse_problem_list("24-27", without_25), (std::vector<int>{24, 26, 27}));
  EXPECT_EQ(parse_problem_list("all", suite()).size(), suite().size());
}

TEST(ProblemList, BadInputNamesThePart) {
  try {
    parse_problem_list("1-3,x", suite());
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
  try {
    parse_problem_list("99", suite());
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no problem 99"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1,2,3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_problem_list("5-2", suite()), std::invalid_argument);
  EXPECT_THROW(parse_problem_list("", suite()), std::invalid_argument);
}

TEST(RunPlan, ALocalServerOnAnotherPortContinuesTheRun) {
  char tmpl[] = "/tmp/pk-run-plan-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  run_options o;
  o.out = tmpl;
  o.device = bench::device_kind::cpu;
  o.problems = {1};
  o.model = "openai-compatible:http://127.0.0.1:8181/v1#gemma-3-270m";
  const std::string id = open_run_dir(o);
  o.model = "openai-compatible:http://127.0.0.1:39211/v1#gemma-3-270m";  // the server restarted elsewhere
  EXPECT_EQ(open_run_dir(o), id);
  o.model = "openai-compatible:http://127.0.0.1:8181/v1#another-model";
  EXPECT_THROW(open_run_dir(o), std::invalid_argument);
  std::filesystem::remove_all(tmpl);
}

TEST(FinalResult, RecordsDeviceBoundPricesAndTheWholeWallTime) {
  const bench::problem& p = bench::find_problem(suite(), "1");
  bench::eval_report r;
  r.world = 2;
  r.device = bench::device_kind::cuda;
  r.result = bench::verdict::correct;
  r.speedup = 1.5;
  r.interval = bench::speedup_interval{1.25, 1.6, 0.999, 80};
  r.reference = bench::timing_stats{0.6, 0.55, 0.65, 100};
  r.candidate = bench::timing_stats{0.4, 0.38, 0.42, 100};
  r.roofline_ms = 0.1;
  r.wall_seconds = 42;
  r.trials.resize(5);
  episode_facts f;
  f.run_id = "r";
  f.model = "openai-compatible:127.0.0.1/v1#m";
  f.prices_known = false;
  f.end_reason = "submitted";
  f.used.wall_seconds = 100;
  metrics::episode_result e = make_result(p, r, f);
  EXPECT_DOUBLE_EQ(e.wall_seconds, 142) << "docs/results.md: start to result, the final scoring included";
  EXPECT_EQ(e.device, bench::device_kind::cuda);
  EXPECT_EQ(e.roofline_ms, 0.1);
  ASSERT_TRUE(e.noise.has_value());
  EXPECT_NEAR(*e.noise, 0.2, 1e-12) << "how far the speedup stands above its interval's low end";
  EXPECT_TRUE(faster_beyond_noise(e));
  EXPECT_FALSE(e.dollars_known);
  EXPECT_NO_THROW(metrics::result_from_json(metrics::to_json(e)));
  r.device = bench::device_kind::cpu;  // the hardware spec's bound is of a GPU
  EXPECT_FALSE(make_result(p, r, f).roofline_ms);
}

TEST(FinalResult, RecordsWhatAForbiddenVerdictCaught) {
  const bench::problem& p = bench::find_problem(suite(), "1");
  bench::eval_report r;
  r.world = 2;
  r.device = bench::device_kind::cpu;
  r.result = bench::verdict::forbidden;
  r.reason = bench::forbidden_reason::tampering;
  episode_facts f;
  f.run_id = "r";
  f.model = "m";
  f.end_reason = "submitted";
  metrics::episode_result e = make_result(p, r, f);
  EXPECT_EQ(e.verdict, "forbidden");
  EXPECT_EQ(e.forbidden_reason, "tampering");
  EXPECT_EQ(metrics::result_from_json(metrics::to_json(e)).forbidden_reason, "tampering");
  r.result = bench::verdict::mismatch;  // a reason left over from nothing: never recorded
  EXPECT_EQ(make_result(p, r, f).forbidden_reason, "");
}

TEST(ExtractSolution, FirstPythonBlockThenBareThenCodeThenNothing) {
  EXPECT_EQ(extract_solution("plan\n```python\nA = 1\n```\n```python\nB = 2\n```\n"), "A = 1\n");
  EXPECT_EQ(extract_solution("```bash\nls\n```\n```py\nC = 3\n```"), "C = 3\n");
  EXPECT_EQ(extract_solution("```\nD = 4\n```\n```python\nE = 5\n```"), "E = 5\n") << "python first";
  EXPECT_EQ(extract_solution("```\nD = 4\n```"), "D = 4\n");
  const std::string bare_code = "import torch\n\ndef solution (x):\n    return x\n";
  EXPECT_EQ(extract_solution(bare_code), bare_code) << "an answer of bare code is taken whole";
  EXPECT_EQ(extract_solution("I cannot write this kernel, sorry."), std::nullopt);
  EXPECT_EQ(extract_solution("E = 5\n"), std::nullopt) << "no block and no solution: nothing to judge";
  // Cut at the output limit inside the block: its code so far.
  EXPECT_EQ(extract_solution("Plan.\n```python\ndef solution(x):\n    y = x +"), "def solution(x):\n    y = x +\n");
  // A long reply is read without recursion.
  EXPECT_EQ(extract_solution(std::string(2'000'000, 'a') + "\n```python\nF = 6\n```"), "F = 6\n");
}

// An episode directory of its own and the demo model's record.
class ZeroShot : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pkagent-zero-shot-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    ep = tmpl;
    model.name = "demo";
  }
  void TearDown() override { std::filesystem::remove_all(ep); }
  std::filesystem::path ep;
  llm::model_config model;
};

// Zero-shot writes its transcript through the agent's writer, and a rerun re-reads the reply
// instead of asking the model again.
TEST_F(ZeroShot, RecordsThroughTheTranscriptWriterAndReusesTheReply) {
  agent::scripted_client once({"Here:\n```python\nX = 1\n```\n"});
  const zero_shot_outcome z = run_zero_shot(once, model, "1_allreduce", "system text", "the problem", ep);
  EXPECT_EQ(z.reason, agent::end_reason::submitted);
  EXPECT_EQ(z.used.steps, 1);
  const agent::transcript_file t = agent::read_transcript(ep / "transcript.jsonl");
  EXPECT_TRUE(t.problems.empty());
  const agent::header_event h = agent::event_as<agent::header_event>(t.header);
  EXPECT_EQ(h.mode, agent::episode_mode::zeroshot);
  EXPECT_EQ(h.task.text, "the problem");
  EXPECT_FALSE(h.setup);
  const agent::request_event req = agent::event_as<agent::request_event>(t.steps.at(1).request);
  ASSERT_EQ(req.new_messages.size(), 2u);
  EXPECT_EQ(req.new_messages[0].text, "system text");
  ASSERT_TRUE(t.finished());
  EXPECT_EQ(agent::event_as<agent::outcome_event>(t.outcome).message, "one completion");
  EXPECT_EQ(read_file(ep / "workspace" / "solution.py"), "X = 1\n");

  agent::scripted_client none(std::vector<std::string>{});
  const zero_shot_outcome again = run_zero_shot(none, model, "1_allreduce", "system text", "the problem", ep);
  EXPECT_EQ(again.reason, agent::end_reason::submitted) << again.message;
  EXPECT_EQ(agent::read_transcript(ep / "transcript.jsonl").events.size(), t.events.size());
}

// A reply without code is not judged (no solution.py); one cut at the output limit says so.
TEST_F(ZeroShot, NoCodeBlockAndACutReplyAreTheirOwnEndReasons) {
  std::filesystem::create_directories(ep / "a");
  std::filesystem::create_directories(ep / "b");
  agent::scripted_client talk({"I would use NCCL here."});
  const zero_shot_outcome z = run_zero_shot(talk, model, "1_allreduce", "system", "the problem", ep / "a");
  EXPECT_EQ(z.reason, agent::end_reason::no_code_block) << z.message;
  EXPECT_FALSE(std::filesystem::exists(ep / "a" / "workspace" / "solution.py"));
  EXPECT_EQ(agent::read_transcript(ep / "a" / "transcript.jsonl").outcome["reason"], "no_code_block");
  EXPECT_EQ(nothing_submitted(ep / "a" / "workspace" / "solution.py", {}), "the episode left no solution.py");

  // A model that stops at its output limit mid-block (the fake provider on loopback says finish=length).
  testkit::fake_provider fake;
  fake.load({{"replies", {{{"text", "```python\ndef solution(x):\n    return x +"}, {"finish", "length"},
                           {"usage", {{"input", 900}, {"output", 4096}}}}}}});
  std::ofstream(ep / "models.toml") << fmt::format(
      "[models.fake]\nprovider = \"openai-chat\"\nbase_url = \"{}\"\nmodel = \"fake-model\"\n"
      "retry = {{ max_retries = 0 }}\n", fake.base_url());
  const agent::chosen_model limited = agent::choose_model("fake", ep / "models.toml");
  const zero_shot_outcome c = run_zero_shot(*limited.client, limited.config, "1_allreduce", "system", "the problem",
                                            ep / "b");
  EXPECT_EQ(c.reason, agent::end_reason::output_token_limit);
  EXPECT_NE(c.message.find("finish=length"), std::string::npos) << c.message;
  EXPECT_EQ(read_file(ep / "b" / "workspace" / "solution.py"), "def solution(x):\n    return x +\n");
  // What an episode's transcript says it spent (a lost or failed episode's result is made of it).
  const model_spend spent = transcript_spend(ep / "b");
  EXPECT_EQ(spent.tokens_in, 900);
  EXPECT_EQ(spent.tokens_out, 4096);
  // The stub every agent episode starts from, unchanged, is no submission either.
  std::ofstream(ep / "stub.py") << "# your solution\n";
  std::ofstream(ep / "same.py") << "# your solution\n";
  EXPECT_EQ(nothing_submitted(ep / "same.py", ep / "stub.py"), "solution.py is still the task's stub");
  EXPECT_EQ(nothing_submitted(ep / "b" / "workspace" / "solution.py", ep / "stub.py"), std::nullopt);
}

TEST(ProblemText, SignatureAndDocstring) {
  EXPECT_EQ(signature_of("import x\n\ndef solution(a: torch.Tensor,\n             b: int) -> torch.Tensor:\n  pass"),
            "def solution(a: torch.Tensor, b: int) -> torch.Tensor");
  EXPECT_EQ(signature_of("def other(): pass"), "");
  EXPECT_EQ(docstring_of("\"\"\"Inputs: two tensors.\n\nMore.\"\"\"\nimport torch"), "Inputs: two tensors.\n\nMore.");
  EXPECT_EQ(docstring_of("import torch\n"), "");
}

TEST(ProblemText, RendersEveryFactTheModelNeeds) {
  const bench::problem& p = bench::find_problem(suite(), "1");
  problem_view v;
  v.world = 2;
  v.device = bench::device_kind::cuda;
  v.final_trials = 5;
  v.machine.device = bench::device_kind::cuda;
  v.machine.gpu_count = 2;
  v.machine.gpu_model = "NVIDIA H200";
  v.machine.links = "NV18";
  v.machine = bench::with_spec(v.machine, bench::hardware_spec_dir() / "h200x2.toml");
  const std::string md = render_problem(p, v, config::data_path("prompts"));
  for (const char* needle : {"All-reduce", "def solution(tensor: torch.Tensor) -> torch.Tensor", "M = 1024, N = 1024",
                             "torch.bfloat16", "atol=0.01", "World size 2", "5 trials", "132 SMs", "NVIDIA H200",
                             "The machine: 2 x NVIDIA H200, linked by NV18", "396 GB/s", "dist.all_reduce", "pkb check",
                             "limited by link"})
    EXPECT_NE(md.find(needle), std::string::npos) << "PROBLEM.md lacks '" << needle << "':\n" << md;
  EXPECT_EQ(md.find("{{"), std::string::npos) << md;
}

// The machine section from what the driver says of the leased GPUs (bench/suite/machine.h), never a spec
// of another machine.
std::string machine_section(const std::string& md) {
  const auto start = md.find("## The machine");
  return md.substr(start, md.find("## Tools") - start);
}

TEST(ProblemText, OneLeasedH200GetsItsOwnSpec) {
  const bench::problem& p = bench::find_problem(suite(), "1");
  problem_view v;
  v.world = 1;
  v.device = bench::device_kind::cuda;
  const sandbox::host_gpu h200{0, 0, "0000:18:00.0", "NVIDIA H200"};
  v.machine = bench::describe_machine(bench::device_kind::cuda, 1, {h200}, {0}, {}, bench::hardware_spec_dir());
  const std::string md = machine_section(render_problem(p, v, config::data_path("prompts")));
  EXPECT_NE(md.find("## The machine: 1 x NVIDIA H200 (one GPU, no links)"), std::string::npos) << md;
  EXPECT_NE(md.find("figures of the spec \"1 x NVIDIA H200\""), std::string::npos) << md;
  EXPECT_NE(md.find("lower bound at world size 1"), std::string::npos) << md;
  EXPECT_EQ(md.find("2 x"), std::string::npos) << md;
}

TEST(ProblemText, NoMatchingSpecMeansNoBound) {
  const bench::problem& p = bench::find_problem(suite(), "1");
  problem_view v;
  v.world = 4;
  v.device = bench::device_kind::cuda;
  std::vector<sandbox::host_gpu> host;
  for (int i = 0; i < 4; ++i) host.push_back({i, i, "", "NVIDIA H200"});
  v.machine = bench::describe_machine(bench::device_kind::cuda, 4, host, {0, 1, 2, 3}, {}, bench::hardware_spec_dir());
  const std::string md = machine_section(render_problem(p, v, config::data_path("prompts")));
  EXPECT_NE(md.find("No hardware spec in config/hardware describes 4 x NVIDIA H200, so no lower bound is given."),
            std::string::npos) << md;
  EXPECT_EQ(md.find("lower bound at world"), std::string::npos) << md;
  EXPECT_EQ(md.find("SMs"), std::string::npos) << md;
}

TEST(ProblemText, CpuModeSaysThereIsNoGpu) {
  const bench::problem& p = bench::find_problem(suite(), "1");
  problem_view v;
  v.world = 2;
  v.device = bench::device_kind::cpu;
  v.machine = bench::describe_machine(bench::device_kind::cpu, 2, {}, {}, {}, bench::hardware_spec_dir());
  const std::string md = machine_section(render_problem(p, v, config::data_path("prompts")));
  EXPECT_NE(md.find("## The machine: no GPU: the ranks run on CPU (gloo)"), std::string::npos) << md;
  EXPECT_NE(md.find("There is no GPU here"), std::string::npos) << md;
  EXPECT_EQ(md.find("H200"), std::string::npos) << md;
}

TEST(ProblemText, TaskDirectoryHoldsTheFiles) {
  const bench::problem& p = bench::find_problem(suite(), "2");
  char tmpl[] = "/tmp/pkagent-run-task-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir = std::filesystem::path(tmpl) / "task";
  write_task_dir(dir, p, "# text\n", config::data_path("prompts"));
  EXPECT_TRUE(std::filesystem::exists(dir / "PROBLEM.md"));
  EXPECT_TRUE(std::filesystem::exists(dir / "reference.py"));
  EXPECT_TRUE(std::filesystem::exists(dir / "solution.py"));
  EXPECT_FALSE(std::filesystem::exists(dir.string() + ".partial"));
  std::filesystem::remove_all(tmpl);
}

TEST(CompilerOutput, KeepsFirstErrorsWithContextAndPtxasLines) {
  std::string log;
  for (int i = 0; i < 50; ++i) log += "noise line " + std::to_string(i) + "\n";
  log += "ptxas info    : Used 64 registers, 0 bytes spill stores, 0 bytes spill loads\n";
  log += "kernel.cu(12): error: identifier \"foo\" is undefined\n   foo(1);\n   ^\n";
  for (int i = 0; i < 50; ++i) log += "more noise " + std::to_string(i) + "\n";
  for (int i = 0; i < 9; ++i) log += "kernel.cu(" + std::to_string(20 + i) + "): error: bad thing\n";
  const std::string shaped = pkb::shape_compiler_output(log);
  EXPECT_NE(shaped.find("Used 64 registers"), std::string::npos) << shaped;
  EXPECT_NE(shaped.find("identifier \"foo\" is undefined"), std::string::npos) << shaped;
  EXPECT_NE(shaped.find("   foo(1);"), std::string::npos) << shaped;   // context after the error
  EXPECT_EQ(shaped.find("noise line 10"), std::string::npos) << shaped;  // far from any error
  EXPECT_EQ(shaped.find("kernel.cu(28)"), std::string::npos) << shaped;  // beyond the first five errors
  EXPECT_NE(shaped.find("10 error lines in all, 5 shown"), std::string::npos) << shaped;
}

TEST(CompilerOutput, TracebackKeepsItsEnd) {
  std::string log = "Traceback (most recent call last):\n";
  for (int i = 0; i < 30; ++i) log += "  File \"x.py\", line " + std::to_string(i) + "\n";
  log += "RuntimeError: CUDA error: an illegal memory access was encountered\n";
  const std::string shaped = pkb::shape_compiler_output(log);
  EXPECT_NE(shaped.find("RuntimeError: CUDA error"), std::string::npos) << shaped;
  EXPECT_NE(shaped.find("line 29"), std::string::npos) << shaped;
  EXPECT_NE(shaped.find("lines left out"), std::string::npos) << shaped;
}

// Raw-page CSV as `ncu --import R --csv --page raw --print-units base` writes it: a header, a
// units row, then one row per launch (two ranks launching the same kernels here).
constexpr const char* ncu_csv =
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
    "\"Grid Size\",\"Device\",\"CC\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\","
    "\"gpu__time_duration.sum\",\"launch__registers_per_thread\",\"nvlrx__bytes.sum\",\"nvltx__bytes.sum\","
    "\"sm__throughput.avg.pct_of_peak_sustained_elapsed\",\"smsp__sass_inst_executed_op_local_ld.sum\","
    "\"smsp__sass_inst_executed_op_local_st.sum\"\n"
    "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"%\",\"nsecond\",\"register/thread\",\"byte\",\"byte\","
    "\"%\",\"inst\",\"inst\"\n"
    "\"0\",\"101\",\"python3\",\"h\",\"vectorized_elementwise_kernel\",\"1\",\"7\",\"(128, 1, 1)\",\"(1024, 1, 1)\","
    "\"0\",\"9.0\",\"80.5\",\"2,000\",\"16\",\"0\",\"0\",\"40\",\"0\",\"0\"\n"
    "\"1\",\"102\",\"python3\",\"h\",\"vectorized_elementwise_kernel\",\"1\",\"7\",\"(128, 1, 1)\",\"(1024, 1, 1)\","
    "\"1\",\"9.0\",\"79.5\",\"2,000\",\"16\",\"0\",\"0\",\"42\",\"0\",\"0\"\n"
    "\"2\",\"101\",\"python3\",\"h\",\"my_peer_copy\",\"1\",\"7\",\"(256, 1, 1)\",\"(132, 1, 1)\",\"0\",\"9.0\","
    "\"12\",\"10,000\",\"96\",\"1,500,000\",\"1,500,000\",\"20\",\"64\",\"64\"\n";

TEST(Profile, CsvIsSummedPerKernelWithUnitsApplied) {
  const auto ks = pkb::parse_ncu_csv(ncu_csv);
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[0].name, "my_peer_copy");  // the longest total time first
  EXPECT_EQ(ks[0].launches, 1);
  EXPECT_DOUBLE_EQ(ks[0].total_us, 10.0);
  EXPECT_DOUBLE_EQ(*ks[0].nvlink_gbps, 300.0);  // 3 MB in 10 us
  EXPECT_EQ(*ks[0].registers, 96);
  EXPECT_DOUBLE_EQ(*ks[0].local_ops, 128.0);
  EXPECT_EQ(ks[1].launches, 2);
  EXPECT_DOUBLE_EQ(ks[1].total_us, 4.0);
  EXPECT_DOUBLE_EQ(*ks[1].dram_pct, 80.0);
  EXPECT_DOUBLE_EQ(*ks[1].sm_pct, 41.0);
  EXPECT_THROW(pkb::parse_ncu_csv("\"ID\",\"x\"\n\"1\",\"2\"\n"), std::runtime_error);
}

const pkb::tool_texts& texts() {
  static const auto t = pkb::tool_texts::load(config::data_path("prompts"), pkb::command_names());
  return t;
}

TEST(Profile, SummaryShowsTheTableOrSaysWhyThereIsNone) {
  const std::string out = std::string("==PKB== check\nproblem 1_allreduce: correct\n==PKB== ncu\n") +
                          std::string(pkb::csv_marker) + "\n" + ncu_csv;
  const std::string s = pkb::summarize_profile(out, 0, texts().profile);
  for (const char* want : {"correct", "kernel", "total us", "DRAM%", "SM%", "NVLink GB/s", "regs", "local ld/st",
                           "my_peer_copy", "300.0", "clock-control none", "profile.ncu-rep"})
    EXPECT_NE(s.find(want), std::string::npos) << want << "\n" << s;
  const std::string denied = pkb::summarize_profile(
      "==PKB== check\nok\n==PKB== ncu\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n", 1,
      texts().profile);
  EXPECT_NE(denied.find("wrote no profile"), std::string::npos) << denied;
  EXPECT_NE(denied.find("administrators"), std::string::npos) << denied;
  const std::string cmd = pkb::profile_command({"/usr/local/cuda/bin/ncu", "/run/pkb-profile/pkagent", "/s", 1, 4, 1,
                                                 60, "[stopped after 60 s; it's hung]\n"});
  EXPECT_NE(cmd.find("--clock-control none"), std::string::npos) << cmd;
  EXPECT_NE(cmd.find("echo '[stopped after 60 s; it'\\''s hung]'\n"), std::string::npos) << cmd;
  EXPECT_NE(cmd.find("--gpus 0,1,2,3"), std::string::npos) << cmd;
  EXPECT_NE(cmd.find("--seed 1 "), std::string::npos) << cmd;
}

TEST(Protocol, RoundTripsAndRefusesGarbage) {
  const std::string line = pkb::encode_request({"run", "--", "echo", "a\"b"});
  EXPECT_EQ(pkb::decode_request(line), (std::vector<std::string>{"run", "--", "echo", "a\"b"}));
  EXPECT_THROW(pkb::decode_request("{\"argv\": [1]}"), std::runtime_error);
  EXPECT_THROW(pkb::decode_request("not json"), std::runtime_error);
  const pkb::reply r = pkb::decode_reply(pkb::encode_reply({3, "out\n"}));
  EXPECT_EQ(r.exit, 3);
  EXPECT_EQ(r.output, "out\n");
}

}  // namespace
}  // namespace pk::run
