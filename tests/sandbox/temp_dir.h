// Test helper: a fresh directory, removed with everything in it at scope exit.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace pk::sandbox::testing {

class temp_dir {
 public:
  explicit temp_dir(const std::filesystem::path& under = std::filesystem::temp_directory_path()) {
    std::string pattern = (under / "pk-sandbox-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace pk::sandbox::testing
