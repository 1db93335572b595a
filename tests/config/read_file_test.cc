#include "config/read_file.h"

#include <unistd.h>

#include <fstream>
#include <system_error>

#include <gtest/gtest.h>

namespace pk {
namespace {

namespace fs = std::filesystem;

class read_file_test : public ::testing::Test {
 protected:
  read_file_test() { fs::create_directories(dir); }
  ~read_file_test() override { fs::remove_all(dir); }
  const fs::path dir = fs::temp_directory_path() / ("pk_read_file_" + std::to_string(::getpid()));
};

TEST_F(read_file_test, reads_every_byte) {
  std::string bytes(200000, 'x');
  bytes[7] = '\0';
  bytes.back() = '\n';
  std::ofstream(dir / "f", std::ios::binary) << bytes;
  EXPECT_EQ(read_file(dir / "f"), bytes);
  EXPECT_EQ(try_read_file(dir / "f"), bytes);
  std::ofstream(dir / "empty");
  EXPECT_EQ(read_file(dir / "empty"), "");
}

TEST_F(read_file_test, names_the_file_and_the_reason) {
  const fs::path missing = dir / "missing.sh";
  try {
    read_file(missing, "the check script");
    FAIL() << "a missing file was read";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), std::errc::no_such_file_or_directory);
    EXPECT_EQ(std::string(e.what()), missing.string() + ": cannot read the check script: No such file or directory");
  }
  try {
    read_file(dir);
    FAIL() << "a directory was read as a file";
  } catch (const std::system_error& e) {
    EXPECT_EQ(std::string(e.what()), dir.string() + ": cannot read: Is a directory");
  }
  EXPECT_EQ(try_read_file(missing), std::nullopt);
  EXPECT_EQ(try_read_file(dir), std::nullopt);
}

}  // namespace
}  // namespace pk
