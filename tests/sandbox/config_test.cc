// config/sandbox.toml: defaults load; every bad value is refused with file, key and reason.
#include "sandbox/config.h"

#include <gtest/gtest.h>

#include "config/toml_reader.h"

namespace pk::sandbox {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_config(text, "sb.toml");
  } catch (const pk::config::config_error& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(sandbox_config_test, the_shipped_defaults_load) {
  const sandbox_config c = load_config(std::string(PKAGENT_TEST_DATA) + "/../../config/sandbox.toml");
  EXPECT_EQ(c.isolation, isolation::bwrap);
  EXPECT_EQ(c.limits.wall, std::chrono::seconds(300));
  EXPECT_EQ(c.limits.output_bytes, 1u << 20);
  EXPECT_EQ(c.limits.memory_bytes, 32ull << 30);
  EXPECT_GT(c.limits.processes, 0u);
}

TEST(sandbox_config_test, reads_every_key) {
  const sandbox_config c = parse_config(R"(
[sandbox]
isolation = "none"
[limits]
timeout_seconds = 1.5
cpu_seconds = 7
file_size = "2M"
open_files = 99
processes = 12
memory = "4G"
tmp_size = "64M"
output = "4K"
)", "sb.toml");
  EXPECT_EQ(c.isolation, isolation::none);
  EXPECT_EQ(c.limits.wall, std::chrono::milliseconds(1500));
  EXPECT_EQ(c.limits.cpu_seconds, 7u);
  EXPECT_EQ(c.limits.file_size_bytes, 2u << 20);
  EXPECT_EQ(c.limits.open_files, 99u);
  EXPECT_EQ(c.limits.processes, 12u);
  EXPECT_EQ(c.limits.memory_bytes, 4ull << 30);
  EXPECT_EQ(c.limits.tmp_bytes, 64u << 20);
  EXPECT_EQ(c.limits.output_bytes, 4096u);
}

TEST(sandbox_config_test, unknown_key_is_refused_with_file_and_key) {
  EXPECT_EQ(error_of("[limits]\nmemroy = \"4G\"\n").rfind("sb.toml: limits.memroy: unknown key", 0), 0u)
      << error_of("[limits]\nmemroy = \"4G\"\n");
  EXPECT_EQ(error_of("[limit]\n").rfind("sb.toml: limit: unknown key", 0), 0u);
}

TEST(sandbox_config_test, wrong_types_are_refused) {
  EXPECT_EQ(error_of("[limits]\nprocesses = \"many\"\n"), "sb.toml: limits.processes: expected an integer, found a string");
  EXPECT_EQ(error_of("[limits]\nmemory = 4\n"), "sb.toml: limits.memory: expected a string, found an integer");
  EXPECT_EQ(error_of("[limits]\ntimeout_seconds = \"5\"\n"),
            "sb.toml: limits.timeout_seconds: expected a number, found a string");
}

TEST(sandbox_config_test, negative_limits_are_refused) {
  EXPECT_EQ(error_of("[limits]\ntimeout_seconds = -1\n"), "sb.toml: limits.timeout_seconds: must be >= 0, found -1");
  EXPECT_EQ(error_of("[limits]\nopen_files = -5\n"), "sb.toml: limits.open_files: must be >= 0, found -5");
  EXPECT_EQ(error_of("[limits]\nmemory = \"-4G\"\n").rfind("sb.toml: limits.memory: '-4G' is not a size", 0), 0u)
      << error_of("[limits]\nmemory = \"-4G\"\n");
}

TEST(sandbox_config_test, bad_isolation_and_sizes_are_refused) {
  EXPECT_EQ(error_of("[sandbox]\nisolation = \"docker\"\n"),
            "sb.toml: sandbox.isolation: 'docker' is not an isolation; use \"bwrap\" or \"none\"");
  EXPECT_EQ(error_of("[limits]\noutput = \"lots\"\n").rfind("sb.toml: limits.output: 'lots' is not a size", 0), 0u);
}

TEST(sandbox_config_test, a_missing_file_is_named) {
  try {
    load_config("/nonexistent/sandbox.toml");
    FAIL();
  } catch (const pk::config::config_error& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/sandbox.toml: no such config file");
  }
}

}  // namespace
}  // namespace pk::sandbox
