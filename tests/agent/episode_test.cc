// Whole episodes against the fake provider and the real sandbox: both action formats, format
// errors, every limit, and keys kept out of transcripts.
#include "agent_fixture.h"

namespace pk::agent::test {
namespace {

class five_step_episode : public agent_test, public ::testing::WithParamInterface<action_format> {};

TEST_P(five_step_episode, EndsWithSubmitAndACompleteTranscript) {
  const action_format f = GetParam();
  fs::path out = dir_ / "out";
  episode_result r = run(script(f, {"sort -n data.txt > sorted.txt && cat sorted.txt",
                                    "echo once >> log.txt && wc -l < log.txt", "seq 1 20000",
                                    "ls; exit 3", "submit"}),
                         options(f), out);
  EXPECT_EQ(r.reason, end_reason::submitted) << r.message;
  EXPECT_EQ(r.used.steps, 5);
  EXPECT_EQ(read_file(out / "workspace" / "sorted.txt"), "1\n2\n3\n");
  EXPECT_EQ(read_file(dir_ / "task" / "workspace" / "data.txt"), "3\n1\n2\n") << "the task was modified";

  transcript_file t = read_transcript(out / "transcript.jsonl");
  EXPECT_TRUE(t.problems.empty());
  ASSERT_FALSE(t.header.is_null());
  EXPECT_EQ(t.header["version"], transcript_version);
  EXPECT_EQ(t.header["model"]["name"], "fake");
  EXPECT_EQ(t.header["config"]["action_format"], to_string(f));
  EXPECT_EQ(t.header["task"]["content_sha256"].get<std::string>().size(), 64u);
  EXPECT_TRUE(t.header["host"].contains("gpus"));
  EXPECT_EQ(events(t, "request").size(), 5u);
  EXPECT_EQ(events(t, "response").size(), 5u);
  ASSERT_EQ(events(t, "observation").size(), 5u);
  ASSERT_TRUE(t.finished());
  EXPECT_EQ(t.outcome["reason"], "submitted");
  EXPECT_EQ(t.outcome["steps"], 5);
  EXPECT_EQ(t.outcome["totals"]["input_tokens"], 500);
  EXPECT_EQ(t.outcome["totals"]["output_tokens"], 100);
  EXPECT_NEAR(t.outcome["totals"]["dollars"].get<double>(), 5 * (0.1 + 0.04), 1e-9);

  // Requests: the first holds the system prompt and the task, later ones only what was added.
  json first = t.steps.at(1).request, second = t.steps.at(2).request;
  ASSERT_EQ(first["new_messages"].size(), 2u);
  EXPECT_EQ(first["new_messages"][0]["role"], "system");
  EXPECT_NE(first["new_messages"][1]["text"].get<std::string>().find("Sort the numbers"), std::string::npos);
  EXPECT_EQ(second["base_step"], 1);
  ASSERT_EQ(second["new_messages"].size(), 2u);
  EXPECT_EQ(second["new_messages"][1]["role"], f == action_format::tools ? "tool" : "user");
  EXPECT_EQ(second["messages_total"], 4);

  // Observations: exit codes, and head + tail with the count of bytes left out.
  EXPECT_EQ(t.steps.at(1).observation["exit_code"], 0);
  EXPECT_NE(t.steps.at(1).observation["text"].get<std::string>().find("1\n2\n3"), std::string::npos);
  EXPECT_EQ(t.steps.at(4).observation["exit_code"], 3);
  EXPECT_NE(t.steps.at(4).observation["text"].get<std::string>().find("<exit_code>3</exit_code>"),
            std::string::npos);
  const std::string big = t.steps.at(3).observation["text"];
  EXPECT_LT(big.size(), 12000u);
  EXPECT_NE(big.find("1\n2\n3\n"), std::string::npos);
  EXPECT_NE(big.find("19999\n20000"), std::string::npos);
  const std::uint64_t total = 108894;  // bytes of `seq 1 20000`
  EXPECT_EQ(t.steps.at(3).observation["stdout"]["bytes"], total);
  EXPECT_NE(big.find(fmt::format("bytes of stdout left out: showing the first and last parts of {} bytes", total)),
            std::string::npos) << big.substr(4000, 2000);
  EXPECT_EQ(t.steps.at(5).observation["kind"], "submit");

  // What the provider received: the tools in tools format only, and each call answered.
  json reqs = fake_.requests();
  ASSERT_EQ(reqs.size(), 5u);
  EXPECT_EQ(reqs[0]["body"].contains("tools"), f == action_format::tools);
  if (f == action_format::tools) {
    json msgs = reqs[1]["body"]["messages"];
    EXPECT_EQ(msgs.back()["role"], "tool");
    EXPECT_EQ(msgs.back()["tool_call_id"], msgs[msgs.size() - 2]["tool_calls"][0]["id"]);
  }
}

INSTANTIATE_TEST_SUITE_P(formats, five_step_episode,
                         ::testing::Values(action_format::tools, action_format::text),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST_F(agent_test, FormatErrorsAreFedBackAndTheirLimitEndsTheEpisode) {
  json replies = json::array({
      {{"text", "I think I should look around first."}},
      {{"text", "```bash\nls\n```\nand\n```bash\npwd\n```\n"}},
      reply(action_format::text, "echo fine"),
      {{"text", "no block"}}, {{"text", "still none"}}, {{"text", "nothing again"}},
      reply(action_format::text, "echo never reached"),
  });
  episode_options o = options(action_format::text);
  o.cfg.limits.format_errors = 3;
  episode_result r = run({{"replies", replies}}, o, dir_ / "out");
  EXPECT_EQ(r.reason, end_reason::format_error_limit) << r.message;
  EXPECT_EQ(r.used.steps, 6) << "the valid command in between resets the count";
  transcript_file t = read_transcript(r.transcript);
  EXPECT_NE(t.steps.at(1).observation["text"].get<std::string>().find("no fenced bash block"), std::string::npos);
  EXPECT_NE(t.steps.at(2).observation["text"].get<std::string>().find("had 2 fenced bash blocks"), std::string::npos);
  EXPECT_EQ(t.steps.at(2).response["action"]["kind"], "invalid");
  EXPECT_EQ(t.steps.at(3).observation["exit_code"], 0);
  EXPECT_EQ(t.outcome["reason"], "format_error_limit");
  // The model saw the format error as the next user turn.
  json reqs = fake_.requests();
  EXPECT_NE(reqs[1]["body"]["messages"].back()["content"].get<std::string>().find("exactly one block"),
            std::string::npos);
}

TEST_F(agent_test, ToolFormatErrorsNameTheProblem) {
  json replies = json::array({
      {{"text", ""}, {"tool_calls", {{{"name", "python"}, {"arguments", {{"code", "1"}}}}}}},
      {{"text", ""}, {"tool_calls", {{{"name", "bash"}, {"arguments_raw", "{not json"}}}}},
      {{"text", "just talking"}},
  });
  episode_options o = options(action_format::tools);
  o.cfg.limits.format_errors = 3;
  episode_result r = run({{"replies", replies}}, o, dir_ / "out");
  EXPECT_EQ(r.reason, end_reason::format_error_limit);
  transcript_file t = read_transcript(r.transcript);
  EXPECT_NE(t.steps.at(1).observation["text"].get<std::string>().find("no tool named `python`"), std::string::npos);
  EXPECT_NE(t.steps.at(2).observation["text"].get<std::string>().find("were not usable"), std::string::npos);
  EXPECT_NE(t.steps.at(3).observation["text"].get<std::string>().find("called no tool"), std::string::npos);
}

struct limit_case {
  const char* name;
  void (*set)(episode_limits&);
  end_reason reason;
  int steps;  ///< steps taken when the limit ends the episode
  const char* command = "true";
};

class limits_end_episode : public agent_test, public ::testing::WithParamInterface<limit_case> {};

TEST_P(limits_end_episode, WithTheRightReason) {
  const limit_case& c = GetParam();
  episode_options o = options(action_format::tools);
  c.set(o.cfg.limits);
  std::vector<std::string> cmds(8, c.command);
  episode_result r = run(script(action_format::tools, cmds), o, dir_ / "out");
  EXPECT_EQ(r.reason, c.reason) << r.message;
  EXPECT_EQ(r.used.steps, c.steps) << r.message;
  transcript_file t = read_transcript(r.transcript);
  EXPECT_EQ(t.outcome["reason"], to_string(c.reason));
  EXPECT_EQ(events(t, "response").size(), static_cast<std::size_t>(c.steps));
}

// Each reply uses 100 input and 20 output tokens, costing $0.10 + $0.04 at the test prices.
INSTANTIATE_TEST_SUITE_P(
    all, limits_end_episode,
    ::testing::Values(
        limit_case{"steps", [](episode_limits& l) { l.steps = 2; }, end_reason::step_limit, 2},
        limit_case{"input_tokens", [](episode_limits& l) { l.input_tokens = 250; }, end_reason::input_token_limit, 3},
        limit_case{"output_tokens", [](episode_limits& l) { l.output_tokens = 50; }, end_reason::output_token_limit, 3},
        limit_case{"dollars", [](episode_limits& l) { l.dollars = 0.3; }, end_reason::cost_limit, 3},
        limit_case{"wall_time", [](episode_limits& l) { l.wall_seconds = 1.0; }, end_reason::wall_time_limit, 2,
                   "sleep 0.7"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(agent_test, StepLimitWarnsTheModelFirst) {
  episode_options o = options(action_format::tools);
  o.cfg.limits.steps = 5;
  episode_result r = run(script(action_format::tools, std::vector<std::string>(6, "true")), o, dir_ / "out");
  EXPECT_EQ(r.reason, end_reason::step_limit);
  transcript_file t = read_transcript(r.transcript);
  EXPECT_EQ(t.steps.at(2).observation["text"].get<std::string>().find("limit"), std::string::npos);
  EXPECT_NE(t.steps.at(3).observation["text"].get<std::string>().find("your next reply is step 4 of your limit of 5"),
            std::string::npos);
  EXPECT_EQ(t.steps.at(4).observation["text"].get<std::string>().find("limit"), std::string::npos) << "warned twice";
}

// With a limit of 3 steps, 80% is reached by the last step: its warning must come with the prompt
// of that step, which the model reads, not after it.
TEST_F(agent_test, TheStepWarningReachesTheModelBeforeItsLastStep) {
  episode_options o = options(action_format::text);
  o.cfg.limits.steps = 3;
  episode_result r = run(script(action_format::text, std::vector<std::string>(3, "true")), o, dir_ / "out");
  EXPECT_EQ(r.reason, end_reason::step_limit);
  const std::string warning = "your next reply is step 3 of your limit of 3 steps";
  const json sent = fake_.requests();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_NE(sent[2]["body"]["messages"].back()["content"].dump().find(warning), std::string::npos)
      << sent[2]["body"]["messages"].back().dump();
  transcript_file t = read_transcript(r.transcript);
  EXPECT_NE(t.steps.at(2).observation["text"].get<std::string>().find(warning), std::string::npos)
      << "the observation records what the model was sent";
  EXPECT_EQ(t.steps.at(3).observation["text"].get<std::string>().find("Note:"), std::string::npos)
      << "no step follows the last observation: a warning there is read by nobody";
}

// A reply cut at the output limit with its command block still open runs nothing: half a command
// (half a heredoc) could do harm. The model is told why; the transcript records the cut.
TEST_F(agent_test, AReplyCutAtTheOutputLimitRunsNothingAndSaysSo) {
  json s = script(action_format::text, {"echo whole > whole.txt", "submit"});
  json cut = {{"text", "Writing the file:\n```bash\ncat > half.txt << 'EOF'\nline one\n"}, {"finish", "length"},
              {"usage", {{"input", 100}, {"output", 4096}}}};
  s["replies"].insert(s["replies"].begin(), cut);
  episode_result r = run(s, options(action_format::text), dir_ / "out");
  EXPECT_EQ(r.reason, end_reason::submitted) << r.message;
  EXPECT_FALSE(fs::exists(dir_ / "out" / "workspace" / "half.txt")) << "a cut command ran";
  EXPECT_TRUE(fs::exists(dir_ / "out" / "workspace" / "whole.txt"));
  transcript_file t = read_transcript(r.transcript);
  const json& first = t.steps.at(1).response;
  EXPECT_EQ(first["response"]["finish"], "length");
  EXPECT_EQ(first["action"]["kind"], "invalid");
  EXPECT_EQ(first["action"]["problem"]["cut"], "1");
  EXPECT_NE(t.steps.at(1).observation["text"].get<std::string>().find("cut off at the output token limit"),
            std::string::npos);
  // Shown where a person reads the transcript.
  std::string shown;
  ASSERT_EQ(pkagent({"replay", r.transcript.string(), "--no-exec", "--format", "text"}, &shown), 0) << shown;
  EXPECT_NE(shown.find("step   1  invalid [cut at the output token limit]"), std::string::npos) << shown;
  ASSERT_EQ(pkagent({"replay", r.transcript.string(), "--no-exec"}, &shown), 0) << shown;
  EXPECT_NE(shown.find("**cut at the output token limit** (finish=length)"), std::string::npos) << shown;
}

TEST_F(agent_test, CommandTimeoutIsReportedAndTheEpisodeGoesOn) {
  episode_options o = options(action_format::tools);
  o.cfg.limits.command_timeout_seconds = 1;
  episode_result r = run(script(action_format::tools, {"echo start; sleep 20", "submit"}), o, dir_ / "out");
  EXPECT_EQ(r.reason, end_reason::submitted);
  transcript_file t = read_transcript(r.transcript);
  const json& obs = t.steps.at(1).observation;
  EXPECT_TRUE(obs["timed_out"].get<bool>());
  EXPECT_LT(obs["wall_seconds"].get<double>(), 10);
  EXPECT_NE(obs["text"].get<std::string>().find("killed after 1 seconds"), std::string::npos);
  EXPECT_NE(obs["text"].get<std::string>().find("start"), std::string::npos);
}

TEST_F(agent_test, ContextOverflowEndsTheEpisodeWithWhatToChange) {
  json s = script(action_format::tools, {"true"});
  s["replies"].push_back({{"fault", "status"}, {"status", 400},
                          {"message", "request (40215 tokens) exceeds the available context size (32768 tokens), "
                                      "try increasing it"}});
  episode_result r = run(s, options(action_format::tools), dir_ / "out");
  EXPECT_EQ(r.reason, end_reason::context_overflow) << r.message;
  for (const char* hint : {"exceeds the available context size", "--ctx", "--max-output-tokens", "limits.steps"})
    EXPECT_NE(r.message.find(hint), std::string::npos) << hint << " missing from: " << r.message;
  EXPECT_EQ(read_transcript(r.transcript).outcome["reason"], "context_overflow");
  // Any other refusal stays a model error.
  s["replies"][1]["message"] = "invalid value for temperature";
  r = run(s, options(action_format::tools), dir_ / "out2");
  EXPECT_EQ(r.reason, end_reason::model_error) << r.message;
}

TEST_F(agent_test, CompatibleModelsGetAnOutputLimitThatTheFlagReplaces) {
  const std::string spec = fmt::format("openai-compatible:{}#fake-model", fake_.base_url());
  auto args = [&](const fs::path& out) {
    return std::vector<std::string>{"episode", "--workspace", (dir_ / "task" / "workspace").string(), "--task",
                                    "Sort the numbers in data.txt.", "--model", spec, "--models", models_.string(),
                                    "--out", out.string(), "-q"};
  };
  fake_.load(script(action_format::tools, {"submit"}));
  std::string output;
  ASSERT_EQ(pkagent(args(dir_ / "default"), &output), 0) << output;
  ASSERT_EQ(fake_.requests().size(), 1u);
  EXPECT_EQ(fake_.requests()[0]["body"]["max_tokens"], llm::compatible_max_output_tokens);

  fake_.load(script(action_format::tools, {"submit"}));
  auto with_flag = args(dir_ / "flag");
  with_flag.insert(with_flag.end(), {"--max-output-tokens", "77"});
  ASSERT_EQ(pkagent(with_flag, &output), 0) << output;
  EXPECT_EQ(fake_.requests()[0]["body"]["max_tokens"], 77);
  const transcript_file t = read_transcript(dir_ / "flag" / "transcript.jsonl");
  EXPECT_EQ(t.header["model"]["max_output_tokens"], 77);
  EXPECT_EQ(t.header["model"]["name"], llm::model_identity(spec));
}

TEST_F(agent_test, NoTranscriptContainsTheKey) {
  // The key goes to the provider, and even a reply that repeats it is stored redacted.
  json s = script(action_format::tools, {fmt::format("echo {} ${{{}:-unset}}", key_value, key_var), "submit"});
  s["replies"][0]["text"] = fmt::format("my key is {}", key_value);
  fake_.load(s);
  fs::path out = dir_ / "cli-out";
  std::string output;
  ASSERT_EQ(pkagent(episode_args(out, action_format::tools), &output), 0) << output;
  json reqs = fake_.requests();
  ASSERT_FALSE(reqs.empty());
  EXPECT_EQ(reqs[0]["auth"]["sha256"], fake_.sha256_hex(key_value)) << "the key was not sent";
  std::string text = read_file(out / "transcript.jsonl");
  EXPECT_EQ(text.find(key_value), std::string::npos);
  EXPECT_NE(text.find(fmt::format("[redacted ${}]", key_var)), std::string::npos);
  EXPECT_NE(text.find("unset"), std::string::npos) << "the sandbox passed the key variable on";
  EXPECT_EQ(output.find(key_value), std::string::npos);
}

}  // namespace
}  // namespace pk::agent::test
