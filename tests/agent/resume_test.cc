// kill -9 of pkagent in the middle of an episode, then the same command again: the episode
// finishes with every step exactly once.
#include "agent_fixture.h"

namespace pk::agent::test {
namespace {

std::size_t count_events(const fs::path& file, const std::string& type) {
  if (!fs::exists(file)) return 0;
  return events(read_transcript(file), type).size();
}

TEST_F(agent_test, KillNineThenResumeLosesAndRepeatsNoStep) {
  const std::vector<std::string> cmds = {"echo step1 >> log.txt", "echo step2 >> log.txt",
                                         "echo step3 >> log.txt", "echo step4 >> log.txt",
                                         "echo step5 >> log.txt", "submit"};
  fake_.load(script(action_format::tools, cmds, /*delay_s=*/0.5));
  fs::path out = dir_ / "out";
  fs::path file = out / "transcript.jsonl";
  std::vector<std::string> args = episode_args(out, action_format::tools);

  boost::process::child first(std::string(PKAGENT_BIN_DIR) + "/pkagent", boost::process::args = args,
                              boost::process::std_out > boost::process::null,
                              boost::process::std_err > boost::process::null);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (count_events(file, "observation") < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(::kill(first.id(), SIGKILL), 0);
  first.wait();
  transcript_file crashed = read_transcript(file);
  ASSERT_FALSE(crashed.finished()) << "the episode ended before the kill";
  const int done = crashed.complete_steps();
  ASSERT_GE(done, 2);
  ASSERT_LT(done, 6);

  // A real model answers the conversation it is sent; the scripted fake answers in order, so it
  // is given the replies from the first step that has no recorded response.
  fake_.load(script(action_format::tools, std::vector<std::string>(cmds.begin() + done, cmds.end())));
  std::string output;
  ASSERT_EQ(pkagent(args, &output), 0) << output;
  EXPECT_NE(output.find(fmt::format("resuming {}: {} complete steps recorded", file.string(), done)),
            std::string::npos) << output;

  transcript_file t = read_transcript(file);
  EXPECT_TRUE(t.problems.empty());
  ASSERT_TRUE(t.finished());
  EXPECT_EQ(t.outcome["reason"], "submitted");
  EXPECT_EQ(t.outcome["steps"], 6);
  std::vector<int> response_steps, observation_steps;
  for (const json& e : events(t, "response")) response_steps.push_back(e["step"]);
  for (const json& e : events(t, "observation")) observation_steps.push_back(e["step"]);
  EXPECT_EQ(response_steps, (std::vector<int>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(observation_steps, (std::vector<int>{1, 2, 3, 4, 5, 6}));
  for (int s = 1; s <= 6; ++s)
    EXPECT_EQ(t.steps.at(s).response["replayed"].get<bool>(), s <= done) << "step " << s;
  // The actions ran once each on a workspace restored from the task.
  EXPECT_EQ(read_file(out / "workspace" / "log.txt"), "step1\nstep2\nstep3\nstep4\nstep5\n");
  // Replayed steps cost no model call; the crashed attempt is kept for the audit.
  EXPECT_EQ(fake_.requests().size(), static_cast<std::size_t>(6 - done));
  EXPECT_EQ(t.header["parent"]["resumed_from"], "transcript.attempt-1.jsonl");
  EXPECT_EQ(t.header["parent"]["replayed_steps"], done);
  EXPECT_TRUE(fs::exists(out / "transcript.attempt-1.jsonl"));
  EXPECT_GE(t.outcome["totals"]["wall_seconds"].get<double>(), crashed.events.back()["t"].get<double>());

  // A finished episode is not run again (bad input: exit status 2).
  EXPECT_EQ(pkagent(args, &output), 2);
  EXPECT_NE(output.find("already finished"), std::string::npos) << output;
}

}  // namespace
}  // namespace pk::agent::test
