// pkagent replay: re-execution with a verdict per step, a planted difference, forks, and the
// rendering of good, truncated and corrupt transcripts.
#include "agent_fixture.h"

namespace pk::agent::test {
namespace {

class replay_test : public agent_test {
 protected:
  /// Records a deterministic episode through the CLI; returns its transcript.
  fs::path record() {
    fake_.load(script(action_format::text,
                      {"sort -n data.txt | tee sorted.txt", "echo \"took 0.$((RANDOM % 90 + 10)) s\"",
                       "wc -c sorted.txt; ls", "submit"}));
    fs::path out = dir_ / "recorded";
    std::string output;
    EXPECT_EQ(pkagent(episode_args(out, action_format::text), &output), 0) << output;
    return out / "transcript.jsonl";
  }
};

TEST_F(replay_test, ReproducesIdenticalObservationsAndFlagsAPlantedDifference) {
  fs::path file = record();
  std::string output;
  ASSERT_EQ(pkagent({"replay", file.string()}, &output), 0) << output;
  EXPECT_NE(output.find("step   1: identical"), std::string::npos) << output;
  EXPECT_EQ(output.find("DIFFERS"), std::string::npos) << output;
  EXPECT_NE(output.find("step   3: identical"), std::string::npos) << output;
  EXPECT_NE(output.find("outcome then: submitted"), std::string::npos) << output;
  EXPECT_NE(output.find("outcome now:  submitted, no verdict (nothing scored it)"), std::string::npos) << output;
  EXPECT_EQ(output.find("score null"), std::string::npos) << output;
  EXPECT_EQ(fake_.requests().size(), 4u) << "replay must not call the model";
  EXPECT_EQ(output.find("pkb tool attached"), std::string::npos) << "this episode used no pkb";
  // --device is for the pkb commands of run episodes; this one has none.
  EXPECT_EQ(pkagent({"replay", file.string(), "--device", "cpu"}, &output), 2) << output;
  EXPECT_NE(output.find("--device applies to episodes of `pkagent run`"), std::string::npos) << output;

  // Plant a difference in step 3's recorded output.
  std::string planted;
  for (json e : read_transcript(file).events) {
    if (e["type"] == "observation" && e["step"] == 3) {
      std::string t = e["text"];
      auto six = t.find("6 sorted.txt");
      ASSERT_NE(six, std::string::npos) << t;
      e["text"] = t.replace(six, 1, "7");
    }
    planted += e.dump() + "\n";
  }
  write_file(file, planted);
  ASSERT_EQ(pkagent({"replay", file.string()}, &output), 1) << output;
  EXPECT_NE(output.find("then '7 sorted.txt', now '6 sorted.txt'"), std::string::npos)
      << output;
  EXPECT_NE(output.find("step   3: DIFFERS"), std::string::npos) << output;
  EXPECT_NE(output.find("step   1: identical"), std::string::npos) << output;
}

TEST_F(replay_test, ForkKeepsStepsAndLinksToItsParent) {
  fs::path file = record();
  fake_.load(script(action_format::text, {"echo forked > fork.txt", "submit"}));
  fs::path out = dir_ / "fork";
  std::string output;
  ASSERT_EQ(pkagent({"replay", file.string(), "--from-step", "2", "--model", "fake", "--models",
                     models_.string(), "--out", out.string(), "-q"}, &output), 0) << output;
  transcript_file t = read_transcript(out / "transcript.jsonl");
  ASSERT_TRUE(t.finished());
  EXPECT_EQ(t.header["parent"]["transcript"], fs::absolute(file).string());
  EXPECT_EQ(t.header["parent"]["step"], 2);
  EXPECT_TRUE(t.steps.at(1).response["replayed"].get<bool>());
  EXPECT_TRUE(t.steps.at(2).response["replayed"].get<bool>());
  EXPECT_FALSE(t.steps.at(3).response["replayed"].get<bool>());
  EXPECT_EQ(t.steps.at(1).observation["text"], read_transcript(file).steps.at(1).observation["text"]);
  EXPECT_EQ(read_file(out / "workspace" / "fork.txt"), "forked\n");
  EXPECT_TRUE(fs::exists(out / "workspace" / "sorted.txt"));
  EXPECT_EQ(fake_.requests().size(), 2u) << "only the steps after the fork call the model";
}

TEST_F(replay_test, RendersAndReportsBrokenLines) {
  fs::path file = record();
  std::string md;
  ASSERT_EQ(pkagent({"replay", file.string(), "--no-exec", "--format", "md"}, &md), 0) << md;
  EXPECT_NE(md.find("# Episode `workspace` with model `fake`"), std::string::npos) << md;
  EXPECT_NE(md.find("## Step 4"), std::string::npos);
  EXPECT_NE(md.find("sort -n data.txt | tee sorted.txt"), std::string::npos);
  EXPECT_NE(md.find("**submitted**"), std::string::npos);

  // Corrupt line 4 and cut the last line short, as a crash mid-write would.
  std::string text = read_file(file);
  std::vector<std::string> lines;
  for (std::size_t b = 0, e; b < text.size(); b = e + 1) lines.push_back(text.substr(b, (e = text.find('\n', b)) - b));
  lines[3] = "{\"type\": \"response\", oops";
  std::string broken;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) broken += lines[i] + "\n";
  broken += lines.back().substr(0, lines.back().size() / 2);
  write_file(file, broken);
  std::string out;
  EXPECT_EQ(pkagent({"replay", file.string(), "--no-exec", "--format", "md"}, &out), 1);
  EXPECT_NE(out.find(fmt::format("{}:4: not valid JSON", file.string())), std::string::npos) << out;
  EXPECT_NE(out.find(fmt::format("{}:{}: truncated", file.string(), lines.size())), std::string::npos) << out;
  EXPECT_NE(out.find("## Step 1"), std::string::npos) << "the readable part is shown";
  EXPECT_NE(out.find("**unfinished**"), std::string::npos);
}

TEST_F(replay_test, MarkdownFencesModelTextAndShowsTheVerdict) {
  // A reply whose text would break the page if pasted raw: a chat-template token and an open fence.
  json s = script(action_format::tools, {"ls", "submit"});
  s["replies"][0]["text"] = "Let me look.<|im_end|>\n```python\nprint('never closed')";
  fake_.load(s);
  fs::path out = dir_ / "fenced";
  std::string output;
  ASSERT_EQ(pkagent(episode_args(out, action_format::tools), &output), 0) << output;
  std::string md;
  ASSERT_EQ(pkagent({"replay", out.string(), "--no-exec", "--format", "md"}, &md), 0) << md;
  EXPECT_NE(md.find("````text\nLet me look.<|im_end|>\n```python\nprint('never closed')\n````\n"), std::string::npos)
      << "the model's text must sit in a fence longer than any inside it:\n" << md;
  EXPECT_NE(md.find("verdict"), std::string::npos) << md;
  EXPECT_EQ(md.find("score null"), std::string::npos) << md;
  EXPECT_NE(md.find("no verdict (nothing scored it"), std::string::npos) << "no check ran, and the page says so:\n" << md;

  // An episode of `pkagent run` is judged by its final scoring, recorded beside the transcript.
  write_file(out / "result.json", R"({"verdict": "mismatch", "correct": false, "speedup": null})");
  ASSERT_EQ(pkagent({"replay", out.string(), "--no-exec", "--format", "md"}, &md), 0) << md;
  EXPECT_NE(md.find("verdict mismatch (final scoring on hidden inputs)"), std::string::npos) << md;
  ASSERT_EQ(pkagent({"replay", out.string(), "--no-exec", "--format", "text"}, &md), 0) << md;
  EXPECT_NE(md.find("verdict mismatch"), std::string::npos) << md;

  // A model recorded without prices (a local server) spent an unknown amount, not $0.
  std::string unpriced;
  for (json e : read_transcript(out / "transcript.jsonl").events) {
    if (e["type"] == "header") e["model"]["prices_usd_per_mtok"]["known"] = false;
    unpriced += e.dump() + "\n";
  }
  write_file(out / "transcript.jsonl", unpriced);
  ASSERT_EQ(pkagent({"replay", out.string(), "--no-exec", "--format", "md"}, &md), 0) << md;
  EXPECT_NE(md.find("$ unknown"), std::string::npos) << md;
  EXPECT_EQ(md.find("$0.0000"), std::string::npos) << md;
}

}  // namespace
}  // namespace pk::agent::test
