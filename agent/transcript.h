// The episode transcript: one JSONL file, one event per line, appended and flushed to disk after
// every event so a crash loses at most the event in flight. docs/transcript.md is the format.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/transcript_event.h"

namespace pk::agent {

using json = nlohmann::json;

/// A secret that must never reach a transcript: its value, and the name shown instead.
struct secret {
  std::string name;
  std::string value;
};
/// The values of environment variables that hold keys or tokens (*_KEY, *TOKEN*, *SECRET*,
/// *PASSWORD*), at least 8 characters long.
std::vector<secret> secrets_from_environment();

/// The one writer of transcripts, for agent episodes and zero-shot completions alike.
class transcript_writer {
 public:
  /// Opens `file` for appending (creating it); `fresh` empties it first. `seconds_before` is the
  /// time earlier attempts of the episode took: every event's "t" counts from it.
  transcript_writer(const std::filesystem::path& file, std::vector<secret> secrets, bool fresh,
                    double seconds_before = 0);
  ~transcript_writer();
  transcript_writer(const transcript_writer&) = delete;
  transcript_writer& operator=(const transcript_writer&) = delete;

  /// Appends the event, with its time "t", as one line and waits until it is on disk; then
  /// passes the line to the observer. Any secret value in it is replaced by "[redacted $NAME]".
  /// Throws std::runtime_error when the write fails.
  void write(const transcript_event& event);
  /// Called with each event's line after it is on disk (progress display); may be empty.
  void observe(std::function<void(const json&)> observer) { observer_ = std::move(observer); }
  /// Seconds since the episode started, earlier attempts included: the "t" of an event written now.
  double seconds() const;
  const std::filesystem::path& path() const { return path_; }

 private:
  void write_line(const json& event);

  std::filesystem::path path_;
  std::vector<secret> secrets_;
  int fd_ = -1;
  double seconds_before_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::function<void(const json&)> observer_;
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
  /// The time of the last event: what the episode has taken so far (0 when there is none).
  double seconds() const;
};

/// Reads what can be read; bad lines (truncated, not JSON, no "type", an event without a field
/// its type requires) become `problems` with their line number and the reading goes on. Throws
/// std::runtime_error only when the file cannot be opened.
transcript_file read_transcript(const std::filesystem::path& file);

}  // namespace pk::agent
