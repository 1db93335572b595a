// The `demo` model: a scripted policy that plays a fixed list of replies from a file, so a whole
// episode runs with no API key and no network (scripts/demo, tests, docs).
//
// Script format: replies separated by lines that are exactly `<!-- reply -->`. Each reply is what
// a text-format model would write (prose and one ```bash block). When the request offers tools,
// the reply's block becomes a `bash` tool call (or a `submit` call for the command `submit`) and
// the prose stays as text, so one script serves both action formats.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "agent/llm/llm.h"

namespace pk::agent {

class scripted_client : public llm::client {
 public:
  explicit scripted_client(std::vector<std::string> replies, std::string name = "demo");
  /// Reads a script file; throws std::runtime_error naming the file when unreadable or empty.
  static scripted_client from_file(const std::filesystem::path& file);

  /// Plays reply N+1 where N is the number of assistant turns in the request, so a resumed
  /// episode continues where it stopped. Throws llm_error when the script has no reply left.
  llm::response complete(const llm::request& req) override;

  std::size_t size() const { return replies_.size(); }

 private:
  std::vector<std::string> replies_;
  std::string name_;
};

}  // namespace pk::agent
