// The episode transcript: one JSONL file, one event per line, appended and flushed to disk after
// every event so a crash loses at most the event in flight. docs/transcript.md is the format.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/llm/llm.h"

namespace pk::agent {

using json = nlohmann::json;

inline constexpr const char* transcript_format = "pkagent-transcript";
inline constexpr int transcript_version = 1;

// The LLM types as transcript JSON (and back, for replay).
json to_json(const llm::message& m);
json to_json(const llm::usage& u);
json to_json(const llm::response& r);
llm::message message_from_json(const json& j);
llm::usage usage_from_json(const json& j);
llm::response response_from_json(const json& j);

/// A secret that must never reach a transcript: its value, and the name shown instead.
struct secret {
  std::string name;
  std::string value;
};
/// The values of environment variables that hold keys or tokens (*_KEY, *TOKEN*, *SECRET*,
/// *PASSWORD*), at least 8 characters long.
std::vector<secret> secrets_from_environment();

class transcript_writer {
 public:
  /// Opens `file` for appending (creating it); `fresh` empties it first.
  transcript_writer(const std::filesystem::path& file, std::vector<secret> secrets, bool fresh);
  ~transcript_writer();
  transcript_writer(const transcript_writer&) = delete;
  transcript_writer& operator=(const transcript_writer&) = delete;

  /// Appends one event as a line and waits until it is on disk. Any secret value in it is
  /// replaced by "[redacted $NAME]". Throws std::runtime_error when the write fails.
  void write(const json& event);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::vector<secret> secrets_;
  int fd_ = -1;
};

/// A line of a transcript that could not be read.
struct transcript_problem {
  int line;
  std::string reason;
};

/// One step as recorded: the request, the response and the observation (each null if absent).
struct recorded_step {
  json request;
  json response;
  json observation;
};

struct transcript_file {
  std::filesystem::path path;
  json header;                 ///< null when the first line is not a readable header
  std::vector<json> events;    ///< every readable event, in order (the header first)
  std::map<int, recorded_step> steps;
  json outcome;                ///< null while the episode is unfinished
  std::vector<transcript_problem> problems;

  bool finished() const { return !outcome.is_null(); }
  /// The steps 1..n that have a response, in order, stopping at the first gap.
  int complete_steps() const;
  /// The recorded responses of steps 1..n.
  std::vector<llm::response> responses(int n) const;
};

/// Reads what can be read; bad lines (truncated, not JSON, no "type") become `problems` with
/// their line number and the reading goes on. Throws std::runtime_error only when the file
/// cannot be opened.
transcript_file read_transcript(const std::filesystem::path& file);

}  // namespace pk::agent
