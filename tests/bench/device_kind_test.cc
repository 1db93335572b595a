// The device enum at its edges: its names, the parser's refusal, JSON and the --device option.
#include "bench/device_kind.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "bench/device_option.h"

namespace pk::bench {
namespace {

using json = nlohmann::json;

TEST(device_kind, every_device_reads_back_from_its_name) {
  for (device_kind d : all_devices) EXPECT_EQ(parse_device(to_string(d)).device, d) << to_string(d);
  EXPECT_EQ(to_string(device_kind::cuda), "cuda");
  EXPECT_EQ(to_string(device_kind::cpu), "cpu");
}

TEST(device_kind, a_bad_name_is_refused_naming_it_and_the_accepted_ones) {
  for (const char* bad : {"gpu", "CUDA", "", "0", "cuda "}) {
    const device_parse p = parse_device(bad);
    EXPECT_FALSE(p.device) << bad;
    EXPECT_EQ(p.error, fmt::format("\"{}\" is not cuda or cpu", bad));
  }
  EXPECT_TRUE(parse_device("cpu").error.empty());
}

TEST(device_kind, json_holds_the_name) {
  EXPECT_EQ(json(device_kind::cpu).dump(), "\"cpu\"");
  EXPECT_EQ(json({{"device", device_kind::cuda}}).dump(), R"({"device":"cuda"})");
  EXPECT_EQ(json("cpu").get<device_kind>(), device_kind::cpu);
  try {
    (void)json("gpu").get<device_kind>();
    FAIL() << "\"gpu\" was read as a device";
  } catch (const json::type_error& e) {
    EXPECT_NE(std::string(e.what()).find("device: \"gpu\" is not cuda or cpu"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)json(1).get<device_kind>(), json::type_error) << "the enum's number is not a device";
}

// Parses `args` (program name first) into a fresh app with --device bound to `device`; returns
// CLI11's error, or "" when it parsed.
template <typename T>
std::string parse(T& device, std::vector<std::string> args) {
  CLI::App app("device_kind_test");
  add_device_option(app, device, "where it runs");
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(device_option, maps_the_names_to_the_enum_and_takes_nothing_else) {
  device_kind d = default_device;
  EXPECT_EQ(parse(d, {}), "");
  EXPECT_EQ(d, default_device);
  EXPECT_EQ(parse(d, {"--device", "cpu"}), "");
  EXPECT_EQ(d, device_kind::cpu);
  EXPECT_EQ(parse(d, {"--device", "cuda"}), "");
  EXPECT_EQ(d, device_kind::cuda);
  for (const char* bad : {"gpu", "0", "1"}) {
    const std::string error = parse(d, {"--device", bad});
    EXPECT_NE(error.find(fmt::format("{} not in {{cuda,cpu}}", bad)), std::string::npos) << bad << ": " << error;
  }
}

TEST(device_option, an_optional_device_stays_unset_unless_given) {
  std::optional<device_kind> d;
  EXPECT_EQ(parse(d, {}), "");
  EXPECT_FALSE(d);
  EXPECT_EQ(parse(d, {"--device", "cpu"}), "");
  EXPECT_EQ(d, device_kind::cpu);
  EXPECT_NE(parse(d, {"--device", "1"}), "");
}

}  // namespace
}  // namespace pk::bench
