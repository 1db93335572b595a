// The small units under the loop: strict templates, head-and-tail truncation, limits, --set.
#include <gtest/gtest.h>

#include "agent/agent_config.h"
#include "agent/limits.h"
#include "agent/observation.h"
#include "agent/prompt_template.h"
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

}  // namespace
}  // namespace pk::agent
