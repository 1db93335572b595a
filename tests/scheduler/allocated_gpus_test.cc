#include "agent/run/scheduler/allocated_gpus.h"

#include <map>

#include <gtest/gtest.h>

namespace {

using pk::scheduler::allocated_gpus;

pk::scheduler::env_lookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

const std::vector<int> eight = {0, 1, 2, 3, 4, 5, 6, 7};

TEST(allocated_gpus, every_host_gpu_when_nothing_restricts) {
  auto a = allocated_gpus(eight, env_of({}));
  EXPECT_EQ(a.gpus, eight);
  EXPECT_EQ(a.source, "host");
}

TEST(allocated_gpus, a_slurm_job_gets_its_own_gpus_over_a_renumbered_cuda_visible_devices) {
  // Under ConstrainDevices Slurm renumbers CUDA_VISIBLE_DEVICES from 0; the job's list names the host's.
  auto a = allocated_gpus(eight, env_of({{"SLURM_JOB_ID", "12"}, {"SLURM_JOB_GPUS", "6,3"},
                                         {"CUDA_VISIBLE_DEVICES", "0,1"}}));
  EXPECT_EQ(a.gpus, (std::vector<int>{3, 6}));
  EXPECT_EQ(a.source, "SLURM_JOB_GPUS");
  auto step = allocated_gpus(eight, env_of({{"SLURM_JOB_ID", "12"}, {"SLURM_JOB_GPUS", "2,3,4,5"},
                                            {"SLURM_STEP_GPUS", "4,5"}}));
  EXPECT_EQ(step.gpus, (std::vector<int>{4, 5}));
}

TEST(allocated_gpus, slurm_variables_count_only_inside_a_job_and_cuda_visible_devices_outside) {
  EXPECT_EQ(allocated_gpus(eight, env_of({{"SLURM_JOB_GPUS", "1"}})).gpus, eight);
  EXPECT_EQ(allocated_gpus(eight, env_of({{"CUDA_VISIBLE_DEVICES", "2,3"}})).gpus, (std::vector<int>{2, 3}));
  EXPECT_TRUE(allocated_gpus(eight, env_of({{"CUDA_VISIBLE_DEVICES", ""}})).gpus.empty());
}

TEST(allocated_gpus, refuses_what_it_cannot_map_to_host_gpus) {
  try {
    allocated_gpus(eight, env_of({{"CUDA_VISIBLE_DEVICES", "GPU-8a1b2c3d"}}));
    FAIL() << "a UUID was taken for an index";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA_VISIBLE_DEVICES=GPU-8a1b2c3d: 'GPU-8a1b2c3d' is not a GPU index"),
              std::string::npos)
        << e.what();
  }
  try {
    allocated_gpus({0, 1}, env_of({{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_GPUS", "1,2"}}));
    FAIL() << "a GPU the host lacks was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("SLURM_JOB_GPUS=1,2 names GPU 2, but this host has GPUs [0,1]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
