// Rank -> GPU placement: one rank per GPU where there are enough, co-located ranks where not.
#include "kr/host/placement.h"

#include <gtest/gtest.h>

#include <vector>

#include "kr/host/error.h"
#include "kr/types/comm.cuh"

namespace {

using kr::host::placement;

std::vector<int> devices(const placement& p) {
  std::vector<int> d;
  for (int r = 0; r < p.world(); ++r) d.push_back(p.device_of(r));
  return d;
}

TEST(placement, one_rank_per_gpu_where_there_are_enough) {
  const placement p(4, 8);
  EXPECT_EQ(devices(p), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_FALSE(p.co_located());
  EXPECT_EQ(p.devices_used(), 4);
  EXPECT_EQ(p.describe(), "4 ranks on 4 GPUs, one per GPU");
}

TEST(placement, ranks_share_gpus_round_robin_and_say_so) {
  const placement one(2, 1);
  EXPECT_EQ(devices(one), (std::vector<int>{0, 0}));
  EXPECT_TRUE(one.co_located());
  EXPECT_EQ(one.devices_used(), 1);
  EXPECT_NE(one.describe().find("2 ranks on 1 GPU, co-located (up to 2 per GPU"), std::string::npos) << one.describe();
  EXPECT_NE(one.describe().find("timings mean nothing"), std::string::npos) << one.describe();

  const placement five_on_two(5, 2);
  EXPECT_EQ(devices(five_on_two), (std::vector<int>{0, 1, 0, 1, 0}));
  EXPECT_NE(five_on_two.describe().find("up to 3 per GPU"), std::string::npos) << five_on_two.describe();
}

TEST(placement, a_single_rank_is_never_co_located) {
  const placement p(1, 1);
  EXPECT_FALSE(p.co_located());
  EXPECT_EQ(p.describe(), "1 rank on 1 GPU, one per GPU");
}

TEST(placement, bad_worlds_gpus_and_ranks_throw_naming_the_fix) {
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const kr::host::error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message([] { placement(0, 1); }).find("use 1 to"), std::string::npos);
  EXPECT_NE(message([] { placement(kr::max_world + 1, 1); }).find("kr::max_world"), std::string::npos);
  EXPECT_NE(message([] { placement(2, 0); }).find("CUDA_VISIBLE_DEVICES"), std::string::npos);
  const placement p(2, 1);
  EXPECT_NE(message([&] { p.device_of(2); }).find("rank 2 outside a world of 2"), std::string::npos);
  EXPECT_NE(message([&] { p.device_of(-1); }).find("rank -1"), std::string::npos);
}

}  // namespace
