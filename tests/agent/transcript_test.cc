// Transcript events and their one writer: every event type round-trips through its JSON, lines
// written before the typed events (agent and zero-shot) still read, the writer stamps times,
// redacts secrets and shows each line to its observer, and the reader names a bad event's line.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agent/transcript.h"
#include "config/read_file.h"

namespace pk::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class transcript_test : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pkagent-transcript-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write_lines(const std::vector<std::string>& lines) {
    const fs::path file = dir_ / "transcript.jsonl";
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    for (const auto& l : lines) out << l << '\n';
    return file;
  }

  fs::path dir_;
};

header_event agent_header() {
  header_event h;
  h.pkagent = this_build();
  h.model = {{"name", "fake"}, {"provider", "openai-chat"}, {"api_key_env", "FAKE_KEY"}};
  h.task = {"1_allreduce", "Make it fast.", task_origin{"/tasks/1", std::string(64, 'a'), std::nullopt}};
  agent_config cfg;
  cfg.action_format = action_format::text;
  cfg.limits.steps = 7;
  h.setup = episode_setup{cfg, 42, sandbox::isolation::none, {0, 1}, json{{"transcript", "/t.jsonl"}, {"step", 2}},
                          json{{"pkb", {{"run", "/runs/a"}, {"problem", "1_allreduce"}}}}};
  h.host = {{"hostname", "h"}, {"cpus", 2}};
  h.started_at = "2026-01-02T03:04:05Z";
  return h;
}

TEST_F(transcript_test, EveryEventRoundTripsThroughItsJson) {
  llm::response reply;
  reply.text = "Next:\n```bash\nls\n```";
  reply.tokens.input = 100;
  reply.tokens.output = 20;
  reply.cost_usd = 0.14;
  reply.finish = llm::finish_reason::stop;
  action ls;
  ls.kind = action::bash;
  ls.command = "ls";
  action bad;
  bad.problem = {{"none", "1"}, {"text_format", "1"}};
  command_record ran{3, 0, true, false, 1.5, 0.25, "a note", {"out\n", 4}, {"err\n", 4000}};
  header_event zero_shot;
  zero_shot.mode = episode_mode::zeroshot;
  zero_shot.task = {"2_allgather", "Write solution.py.", std::nullopt};
  usage_so_far used{3, 0, 300, 60, 0.42, 12.5, 1.5};

  const std::vector<transcript_event> events = {
      agent_header(),
      zero_shot,
      request_event{1, std::nullopt, {llm::system_message("sys"), llm::user_message("task")}, 2,
                    {{"bash", "run a command", json{{"type", "object"}}}}},
      request_event{2, 1, {reply.to_message()}, 3, {}},
      response_event{2, true, reply, ls},
      response_event{1, false, reply, std::nullopt},
      response_event{3, false, reply, bad},
      observation_event{2, action::bash, ran, "shown to the model"},
      observation_event{3, action::submit, std::nullopt, std::nullopt},
      evaluation_event{true, 1.0, 2.5, json{{"verdict", "correct"}}},
      outcome_event{end_reason::submitted, "the model submitted", 1.0, used, 17},
      outcome_event{end_reason::model_error, "HTTP 500", std::nullopt, used, 0},
  };
  for (const transcript_event& e : events) {
    const json line = to_json(e);
    const transcript_event back = event_from_json(json::parse(line.dump()));
    EXPECT_EQ(back.index(), e.index());
    EXPECT_EQ(to_json(back), line) << line.dump(2);
  }
  // The fields docs/transcript.md names, where it names them.
  const json h = to_json(events[0]);
  EXPECT_EQ(h["type"], "header");
  EXPECT_EQ(h["format"], transcript_format);
  EXPECT_EQ(h["version"], transcript_version);
  EXPECT_EQ(h["task"]["check"], nullptr);
  EXPECT_EQ(h["sandbox"], (json{{"isolation", "none"}, {"gpus", {0, 1}}}));
  EXPECT_EQ(h["config"]["limits"]["steps"], 7);
  EXPECT_EQ(h["tools"]["pkb"]["problem"], "1_allreduce");
  const json z = to_json(events[1]);
  EXPECT_EQ(z["mode"], "zeroshot");
  EXPECT_FALSE(z.contains("config") || z.contains("sandbox") || z.contains("tools") || z["task"].contains("workspace"));
  EXPECT_EQ(to_json(events[7])["stdout"], (json{{"text", "out\n"}, {"bytes", 4}}));
  EXPECT_FALSE(to_json(events[8]).contains("text")) << "a submit sends the model nothing";
  const json o = to_json(events[10]);
  EXPECT_EQ(o["steps"], 3);
  EXPECT_EQ(o["totals"]["cached_input_tokens"], 17);
  EXPECT_EQ(o["totals"]["input_tokens"], 300);
  EXPECT_EQ(to_json(events[11])["score"], nullptr);
}

// Lines as pkagent wrote them before its events were typed: agent headers had no "mode", zero-shot
// headers only the task's id and text, zero-shot requests no base_step and responses no action.
TEST_F(transcript_test, EarlierLinesStillRead) {
  const fs::path agent_file = write_lines({
      R"({"type":"header","format":"pkagent-transcript","version":1,"pkagent":{"version":"0.1","commit":"abc"},)"
      R"("model":{"name":"fake"},"task":{"id":"unit","text":"Sort.","workspace":"/w","content_sha256":"00",)"
      R"("check":null},)"
      R"("config":{"action_format":"tools","limits":{"steps":50,"format_errors":3,"input_tokens":0,"output_tokens":0,)"
      R"("dollars":0,"wall_seconds":0,"command_timeout_seconds":600,"gpu_seconds":0,"warn_fraction":0.8},)"
      R"("observation":{"stdout_bytes":10240,"stderr_bytes":10240}},"seed":null,)"
      R"("sandbox":{"isolation":"bwrap","gpus":[]},"host":{"cpus":2},"parent":null,"started_at":"x","t":0})",
      R"({"type":"request","step":1,"base_step":null,"new_messages":[{"role":"system","text":"s"}],)"
      R"("messages_total":1,"t":0.1})",
      R"({"type":"response","step":1,"replayed":false,"response":{"text":"","tool_calls":[],"finish":"stop",)"
      R"("usage":{"input":10,"output":2}},"action":{"kind":"submit"},"t":0.5})",
      R"({"type":"observation","step":1,"kind":"submit","t":0.6})",
      R"({"type":"outcome","reason":"submitted","message":"the model submitted","steps":1,"score":null,)"
      R"("totals":{"steps":1,"input_tokens":10,"output_tokens":2,"dollars":0.0,"wall_seconds":0.7,"gpu_seconds":0,)"
      R"("cached_input_tokens":0},"t":0.7})",
  });
  const transcript_file a = read_transcript(agent_file);
  EXPECT_TRUE(a.problems.empty()) << a.problems.at(0).line << ": " << a.problems.at(0).reason;
  ASSERT_FALSE(a.header.is_null());
  const header_event ah = event_as<header_event>(a.header);
  EXPECT_EQ(ah.mode, episode_mode::agent);
  ASSERT_TRUE(ah.setup);
  EXPECT_EQ(ah.setup->isolation, sandbox::isolation::bwrap);
  EXPECT_EQ(a.complete_steps(), 1);
  EXPECT_EQ(event_as<outcome_event>(a.outcome).used.input_tokens, 10);
  EXPECT_DOUBLE_EQ(a.seconds(), 0.7);

  const fs::path zero_shot_file = write_lines({
      R"({"type":"header","format":"pkagent-transcript","version":1,"mode":"zeroshot",)"
      R"("pkagent":{"version":"0.1","commit":"abc"},"model":{"name":"demo"},"task":{"id":"1_allreduce","text":"P"},)"
      R"("host":{},"started_at":"x","t":0})",
      R"({"type":"request","step":1,"new_messages":[{"role":"system","text":"s"},{"role":"user","text":"P"}],)"
      R"("messages_total":2,"t":0.01})",
      R"({"type":"response","step":1,"response":{"text":"```python\nx = 1\n```",)"
      R"("usage":{"input":5,"output":3}},"t":1.5})",
      R"({"type":"outcome","reason":"submitted","message":"one completion","steps":1,)"
      R"("totals":{"steps":1,"input_tokens":5,"output_tokens":3,"dollars":0,"wall_seconds":1.5,"gpu_seconds":0},)"
      R"("t":1.5})",
  });
  const transcript_file z = read_transcript(zero_shot_file);
  EXPECT_TRUE(z.problems.empty()) << z.problems.at(0).line << ": " << z.problems.at(0).reason;
  EXPECT_EQ(event_as<header_event>(z.header).mode, episode_mode::zeroshot);
  EXPECT_FALSE(event_as<response_event>(z.steps.at(1).response).parsed_action);
  EXPECT_EQ(z.responses(1).at(0).tokens.output, 3);
  EXPECT_EQ(event_as<outcome_event>(z.outcome).reason, end_reason::submitted);
}

TEST_F(transcript_test, TheReaderNamesAnEventLackingARequiredField) {
  const fs::path file = write_lines({
      to_json(agent_header()).dump(),
      R"({"type":"request","step":1,"new_messages":[],"messages_total":0,"t":0.1})",
      R"({"type":"response","step":1,"replayed":false,"t":0.2})",
      R"({"type":"outcome","reason":"exploded","message":"","steps":0,"totals":{},"t":0.3})",
  });
  const transcript_file t = read_transcript(file);
  ASSERT_EQ(t.problems.size(), 2u);
  EXPECT_EQ(t.problems[0].line, 3);
  EXPECT_NE(t.problems[0].reason.find("a response event that cannot be read"), std::string::npos)
      << t.problems[0].reason;
  EXPECT_NE(t.problems[0].reason.find("response"), std::string::npos);
  EXPECT_EQ(t.problems[1].line, 4);
  EXPECT_NE(t.problems[1].reason.find("\"exploded\" is not an end reason"), std::string::npos) << t.problems[1].reason;
  EXPECT_FALSE(t.finished()) << "an unreadable outcome does not end the episode";
  EXPECT_EQ(t.complete_steps(), 0);
  EXPECT_FALSE(t.header.is_null());
}

TEST_F(transcript_test, TheWriterStampsRedactsAndShowsEachLine) {
  const fs::path file = dir_ / "w.jsonl";
  std::vector<json> seen;
  {
    transcript_writer log(file, {{"SOME_KEY", "sk-very-secret-1234"}}, /*fresh=*/true, /*seconds_before=*/5.0);
    log.observe([&](const json& line) { seen.push_back(line); });
    header_event h = agent_header();
    h.task.text = "the key is sk-very-secret-1234";
    log.write(h);
    log.write(request_event{1, std::nullopt, {llm::user_message("hello")}, 1, {}});
    EXPECT_GE(log.seconds(), 5.0);
  }
  {
    // A writer that is not fresh appends.
    transcript_writer more(file, {}, /*fresh=*/false);
    more.write(outcome_event{end_reason::submitted, "done", std::nullopt, {}, 0});
  }
  const transcript_file t = read_transcript(file);
  EXPECT_TRUE(t.problems.empty());
  ASSERT_EQ(t.events.size(), 3u);
  EXPECT_GE(t.events[0]["t"].get<double>(), 5.0) << "time counts from the earlier attempts";
  EXPECT_LE(t.events[0]["t"].get<double>(), t.events[1]["t"].get<double>());
  EXPECT_EQ(t.header["task"]["text"], "the key is [redacted $SOME_KEY]");
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0]["type"], "header");
  EXPECT_EQ(seen[1]["type"], "request");
  EXPECT_EQ(seen[1]["t"], t.events[1]["t"]);
  EXPECT_TRUE(t.finished());

  EXPECT_EQ(read_file(file).find("sk-very-secret-1234"), std::string::npos);
}

}  // namespace
}  // namespace pk::agent
