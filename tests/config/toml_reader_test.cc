#include "config/toml_reader.h"

#include <gtest/gtest.h>

#include "config/nearest.h"

namespace pk::config {
namespace {

TEST(toml_reader, reads_typed_values_and_rejects_unknown_keys) {
  auto t = parse_text("name = \"x\"\nsteps = 3\nratio = 0.5\nflag = true\ntypo = 1\n", "t.toml");
  table_reader r(t, "t.toml");
  EXPECT_EQ(r.string("name"), "x");
  EXPECT_EQ(r.non_negative("steps"), 3);
  EXPECT_EQ(r.number("ratio"), 0.5);
  EXPECT_EQ(r.boolean("flag"), true);
  EXPECT_EQ(r.string("absent"), std::nullopt);
  try {
    r.finish();
    FAIL() << "unknown key accepted";
  } catch (const config_error& e) {
    EXPECT_STREQ(e.what(), "t.toml: typo: unknown key (check its spelling against the documented keys)");
  }
}

TEST(toml_reader, an_unknown_key_is_named_with_the_nearest_key_the_loader_knows) {
  auto t = parse_text("[limits]\nstep = 5\nwall_secs = 3\n", "a.toml");
  table_reader r(t, "a.toml");
  auto limits = r.table("limits");
  ASSERT_TRUE(limits);
  EXPECT_EQ(limits->integer("steps"), std::nullopt);  // asked for, though absent: a known key
  EXPECT_EQ(limits->number("wall_seconds"), std::nullopt);
  try {
    limits->finish();
    FAIL() << "unknown key accepted";
  } catch (const config_error& e) {
    EXPECT_STREQ(e.what(), "a.toml: limits.step: unknown key; did you mean limits.steps?");
  }
  auto far = parse_text("zzz = 1\n", "b.toml");
  table_reader f(far, "b.toml");
  EXPECT_EQ(f.integer("steps"), std::nullopt);
  EXPECT_THROW(
      {
        try {
          f.finish();
        } catch (const config_error& e) {
          EXPECT_STREQ(e.what(), "b.toml: zzz: unknown key (check its spelling against the documented keys)");
          throw;
        }
      },
      config_error);
}

TEST(nearest, suggests_only_likely_typos) {
  const std::vector<std::string> flags = {"--problem", "--solution", "--world", "--timeout"};
  EXPECT_EQ(nearest("--problme", flags), "--problem");  // a swap is one step
  EXPECT_EQ(nearest("--wrld", flags), "--world");
  EXPECT_EQ(nearest("--timout", flags), "--timeout");
  EXPECT_EQ(nearest("--frobnicate", flags), std::nullopt);
  EXPECT_EQ(nearest("evla", {"eval", "episode", "run"}), "eval");
  EXPECT_EQ(nearest("x", {"q"}), std::nullopt);  // everything changed is no typo
  EXPECT_EQ(nearest("step", {}), std::nullopt);
  // A word one step from two candidates: nearest_all names both, in their order.
  EXPECT_EQ(nearest_all("--modle", {"--mode", "--model", "--models"}),
            (std::vector<std::string>{"--mode", "--model"}));
  EXPECT_EQ(nearest_all("--problme", flags), std::vector<std::string>{"--problem"});
  EXPECT_TRUE(nearest_all("--frobnicate", flags).empty());
}

TEST(toml_string, makes_any_text_a_toml_string) {
  for (const std::string text : {"text", "a \"quoted\" word", "back\\slash", "", "line\nbreak"}) {
    const auto t = parse_text("k = " + toml_string(text), "q");
    EXPECT_EQ(t["k"].value<std::string>(), text) << toml_string(text);
  }
}

TEST(toml_reader, wrong_type_and_negative_values_name_file_and_dotted_key) {
  auto t = parse_text("[limits]\nsteps = \"ten\"\nwall = -1\n", "s.toml");
  table_reader r(t, "s.toml");
  auto limits = r.table("limits");
  ASSERT_TRUE(limits);
  EXPECT_THROW(
      {
        try {
          limits->integer("steps");
        } catch (const config_error& e) {
          EXPECT_STREQ(e.what(), "s.toml: limits.steps: expected an integer, found a string");
          throw;
        }
      },
      config_error);
  try {
    limits->non_negative("wall");
    FAIL() << "negative limit accepted";
  } catch (const config_error& e) {
    EXPECT_STREQ(e.what(), "s.toml: limits.wall: must be >= 0, found -1");
  }
}

TEST(toml_reader, syntax_errors_carry_line_and_column) {
  try {
    parse_text("a = 1\nb = = 2\n", "bad.toml");
    FAIL() << "syntax error accepted";
  } catch (const config_error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.toml:2:"), std::string::npos) << e.what();
  }
}

TEST(parse_size, units) {
  EXPECT_EQ(parse_size("1024"), 1024u);
  EXPECT_EQ(parse_size("64K"), 64u << 10);
  EXPECT_EQ(parse_size("512M"), 512ull << 20);
  EXPECT_EQ(parse_size("4G"), 4ull << 30);
  EXPECT_THROW(parse_size("4X"), std::invalid_argument);
  EXPECT_THROW(parse_size("G"), std::invalid_argument);
  EXPECT_THROW(parse_size("99999999999999999999"), std::invalid_argument);
}

}  // namespace
}  // namespace pk::config
