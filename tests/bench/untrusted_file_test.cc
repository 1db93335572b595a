// What the judge refuses to read where candidate code could have written: links, FIFOs, devices,
// hard links, oversized files, paths through a linked directory.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "bench/eval/untrusted_file.h"

namespace pk::bench {
namespace {

namespace fs = std::filesystem;

class untrusted_file_test : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("untrusted_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "out" / "rank0");
    fs::create_directories(root_ / "secret");
    std::ofstream(root_ / "out" / "rank0" / "trial0.st") << "candidate bytes";
    std::ofstream(root_ / "secret" / "expected.st") << "the reference's outputs";
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string refusal(const fs::path& rel, std::uint64_t cap = 1 << 20) {
    try {
      read_untrusted(root_ / "out", rel, cap);
    } catch (const untrusted_file_error& e) {
      return e.what();
    }
    return "";
  }
  fs::path root_;
};

TEST_F(untrusted_file_test, reads_a_plain_file) {
  EXPECT_EQ(read_untrusted(root_ / "out", "rank0/trial0.st", 1 << 20), "candidate bytes");
  EXPECT_TRUE(untrusted_file_exists(root_ / "out", "rank0/trial0.st"));
}

TEST_F(untrusted_file_test, refuses_a_symbolic_link_to_the_expected_outputs) {
  fs::remove(root_ / "out" / "rank0" / "trial0.st");
  fs::create_symlink(root_ / "secret" / "expected.st", root_ / "out" / "rank0" / "trial0.st");
  EXPECT_NE(refusal("rank0/trial0.st").find("symbolic link"), std::string::npos);
  EXPECT_FALSE(untrusted_file_exists(root_ / "out", "rank0/trial0.st"));
}

TEST_F(untrusted_file_test, refuses_a_path_through_a_linked_directory) {
  fs::remove_all(root_ / "out" / "rank0");
  fs::create_directory_symlink(root_ / "secret", root_ / "out" / "rank0");
  EXPECT_NE(refusal("rank0/expected.st").find("not a plain directory"), std::string::npos);
}

TEST_F(untrusted_file_test, refuses_a_hard_link) {
  fs::remove(root_ / "out" / "rank0" / "trial0.st");
  fs::create_hard_link(root_ / "secret" / "expected.st", root_ / "out" / "rank0" / "trial0.st");
  EXPECT_NE(refusal("rank0/trial0.st").find("hard links"), std::string::npos);
}

TEST_F(untrusted_file_test, refuses_a_fifo_without_blocking) {
  fs::remove(root_ / "out" / "rank0" / "trial0.st");
  ASSERT_EQ(::mkfifo((root_ / "out" / "rank0" / "trial0.st").c_str(), 0600), 0);
  EXPECT_NE(refusal("rank0/trial0.st").find("FIFO"), std::string::npos);
}

TEST_F(untrusted_file_test, refuses_an_oversized_file_and_paths_that_leave_the_root) {
  EXPECT_NE(refusal("rank0/trial0.st", 4).find("more than the 4 allowed"), std::string::npos);
  EXPECT_NE(refusal("../secret/expected.st").find("leaves its directory"), std::string::npos);
  EXPECT_NE(refusal("rank0/missing.st").find("No such file"), std::string::npos);
}

}  // namespace
}  // namespace pk::bench
