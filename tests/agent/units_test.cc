// The small units under the loop: strict templates, head-and-tail truncation, limits, --set.
#include <gtest/gtest.h>

#include "agent/agent_config.h"
#include "agent/limits.h"
#include "agent/observation.h"
#include "agent/prompt_template.h"
#include "agent/replay.h"
#include "config/paths.h"
#include "config/toml_reader.h"

namespace pk::agent {
namespace {

TEST(agent_config, SetTakesTomlValuesOrBareStrings) {
  agent_config cfg;
  apply_overrides(cfg, {"action.format=text", "limits.steps=7", "limits.dollars=0.5"});
  EXPECT_EQ(cfg.action_format, action_format::text);  // no TOML quoting needed
  EXPECT_EQ(cfg.limits.steps, 7);
  EXPECT_EQ(cfg.limits.dollars, 0.5);
  apply_overrides(cfg, {"action.format=\"tools\""});
  EXPECT_EQ(cfg.action_format, action_format::tools);
  // A bare word where a number belongs is still refused, as the string it is.
  try {
    apply_overrides(cfg, {"limits.steps=many"});
    FAIL() << "a word was taken as a step count";
  } catch (const config::config_error& e) {
    EXPECT_STREQ(e.what(), "--set limits.steps=many: limits.steps: expected an integer, found a string");
  }
  try {
    apply_overrides(cfg, {"limit.steps=5"});
    FAIL() << "an unknown table was accepted";
  } catch (const config::config_error& e) {
    EXPECT_STREQ(e.what(), "--set limit.steps=5: limit: unknown key; did you mean limits?");
  }
  EXPECT_THROW(apply_overrides(cfg, {"limits.steps"}), config::config_error);
}

TEST(prompt_template, RefusesUnknownAndMissingVariables) {
  try {
    prompt_template("ok\nhello {{nmae}}", "t.md", {"name"});
    FAIL() << "an unknown placeholder was accepted";
  } catch (const template_error& e) {
    EXPECT_STREQ(e.what(), "t.md:2: unknown placeholder 'nmae'; this template may use: name");
  }
  prompt_template t("{{#a}}A={{a}}\n{{/a}}{{^a}}no a\n{{/a}}{{b}}", "t.md", {"a", "b"});
  EXPECT_EQ(t.render({{"a", "1"}, {"b", "!"}}), "A=1\n!");
  EXPECT_EQ(t.render({{"a", ""}, {"b", "!"}}), "no a\n!");
  EXPECT_THROW(t.render({{"a", "1"}}), template_error);
  EXPECT_THROW(prompt_template("{{#a}}x", "t.md", {"a"}), template_error);
}

TEST(head_tail, KeepsBothEndsAndCountsWhatItLeftOut) {
  prompt_set p = prompt_set::load(config::data_path("prompts"));
  std::string text(1000, 'x');
  text.replace(0, 5, "START");
  text.replace(995, 5, "END!!");
  std::string cut = head_tail(text, 5000, 100, "stdout", p);
  EXPECT_EQ(cut.substr(0, 5), "START");
  EXPECT_EQ(cut.substr(cut.size() - 5), "END!!");
  EXPECT_NE(cut.find("[... 4900 bytes of stdout left out"), std::string::npos) << cut;
  EXPECT_EQ(head_tail("short", 5, 100, "stdout", p), "short");
  // Never splits a UTF-8 sequence.
  std::string utf8;
  for (int i = 0; i < 100; ++i) utf8 += "é";
  std::string u = head_tail(utf8, utf8.size(), 51, "stdout", p);
  EXPECT_EQ(u.substr(0, 24), std::string(utf8, 0, 24));
}

TEST(limits, GpuSecondsEndAnEpisodeLikeTheOthers) {
  episode_limits l;
  l.steps = 0;
  l.gpu_seconds = 10;
  usage_so_far u;
  u.gpu_seconds = 9.5;
  EXPECT_FALSE(exceeded(l, u));
  u.gpu_seconds = 10;
  auto hit = exceeded(l, u);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->reason, end_reason::gpu_time_limit);
  EXPECT_EQ(hit->message, "gpu_seconds: 10 s used of a limit of 10 s");
}

// A re-executed `pkb bench` measures anew: times, speedups, percentages of the bound, call counts,
// the GPUs leased and the judge's cache differ from the recording without the step differing.
TEST(replay, MeasuredFiguresAreComparedAsSuch) {
  auto recorded = [](const std::string& text) {
    transcript_file t;
    t.steps[1].observation = {{"type", "observation"}, {"step", 1}, {"text", text}};
    return t;
  };
  const std::string then =
      "trial 0: correct  reference 412.0 us  candidate 398.2 us  speedup 1.035x (99.9% interval 1.012-1.061 over 80 "
      "pairs: faster than the reference by at least 1.2%)\n"
      "verdict: correct\n"
      "timing (max over ranks per call, median over 120 calls each): reference 0.412 ms (p10 0.401 ms)\n"
      "speedup: 1.035x   max error: 0 absolute, 0 relative   roofline bound 12.1 us (link-bound): candidate at 3% of it\n"
      "timing check: trial 0: the reference's spread is 31% of its median\n"
      "wall time 3.1 s (reference outputs from the cache)\n"
      "GPU 0: NVIDIA H200 (UUID: GPU-0b5c2e4a-1111-2222-3333-444455556666)\n";
  const std::string now =
      "trial 0: correct  reference 1.204 ms  candidate 1.1 ms  speedup 1.09x (99.9% interval 0.98-1.2 over 40 pairs: "
      "the same as the reference within ±10.0%)\n"
      "verdict: correct\n"
      "timing (max over ranks per call, median over 87 calls each): reference 1.204 ms (p10 1.1 ms)\n"
      "speedup: 1.09x   max error: 0 absolute, 0 relative   roofline bound 12.1 us (link-bound): candidate at 1% of it\n"
      "wall time 9.8 s\n"
      "GPU 3: NVIDIA H200 (UUID: GPU-9f9f2e4a-aaaa-bbbb-cccc-ddddeeeeffff)\n";
  EXPECT_EQ(compare_observations(recorded(then), recorded(now)).at(0).result, step_match::measured_only);
  EXPECT_EQ(compare_observations(recorded(then), recorded(then)).at(0).result, step_match::identical);
  // What the command decided is compared: another verdict, another error, another line.
  std::string wrong = now;
  wrong.replace(wrong.find("verdict: correct"), 16, "verdict: mismatch");
  const step_match m = compare_observations(recorded(then), recorded(wrong)).at(0);
  EXPECT_EQ(m.result, step_match::differs);
  EXPECT_NE(m.detail.find("verdict: mismatch"), std::string::npos) << m.detail;
  std::string error = now;
  error.replace(error.find("max error: 0 absolute"), 21, "max error: 3 absolute");
  EXPECT_EQ(compare_observations(recorded(then), recorded(error)).at(0).result, step_match::differs);
}

}  // namespace
}  // namespace pk::agent
