// The live progress of a run: a line per finished step and per finished episode (its verdict, end
// reason, tokens and dollars), and the run's status: episodes done / running / queued, correct,
// faster, tokens, dollars, elapsed and ETA. On a terminal the status is one line redrawn in place
// under the others; otherwise every line is a plain log line, so logs of CI and nohup runs stay
// readable; `--progress json` writes the same as one JSON object per line, for programs.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include <nlohmann/json.hpp>

namespace pk::run {

/// How progress is shown.
enum class progress_mode {
  live,   ///< a terminal: the status line redrawn in place, the other lines above it
  lines,  ///< plain lines (stderr is not a terminal)
  json,   ///< one JSON object per line ("event": start, step, done, note, status)
  quiet,  ///< nothing
};
/// "text" (live on a terminal, else lines) or "json"; throws std::invalid_argument otherwise.
progress_mode progress_mode_for(std::string_view format, bool quiet, bool terminal);

/// One finished step of an episode, as its transcript recorded it.
struct step_report {
  int step = 0;
  bool replayed = false;     ///< played from an earlier attempt (resume)
  std::string action;        ///< bash, submit or invalid
  std::string command;       ///< bash: the command
  bool cut = false;          ///< the reply was cut at the output token limit per reply
  std::optional<int> exit_code;
  bool timed_out = false;
  double wall_seconds = 0;   ///< of the command
};

/// One finished episode.
struct episode_report {
  std::string verdict;
  bool correct = false;
  bool faster = false;
  std::optional<double> speedup;
  std::string end_reason;
  std::int64_t steps = 0;
  std::int64_t tokens = 0;   ///< in + out, over the whole episode (earlier attempts included)
  double dollars = 0;
};

class progress {
 public:
  /// `out` is where lines go (stderr). `prices_known`: false shows dollars as unknown.
  progress(int total, int already_done, std::FILE* out, progress_mode mode, bool prices_known = true);
  ~progress();

  void started(const std::string& episode);
  /// A model reply of `episode` came back: its tokens and dollars grow, and the run's.
  void spent(const std::string& episode, std::int64_t tokens, double dollars);
  void step(const std::string& episode, const step_report& s);
  void finished(const std::string& episode, const episode_report& r);
  /// A line of its own (warnings), above the live line.
  void note(const std::string& line);
  /// Counts an episode finished by an earlier invocation (already in `already_done`).
  void restored(bool correct, bool faster, std::int64_t tokens, double dollars);

  std::string status_line() const;

 private:
  struct spend {
    std::int64_t tokens = 0;
    double dollars = 0;
  };
  void draw_locked() const;
  void log_locked(const std::string& line) const;
  void emit_locked(nlohmann::json event) const;
  std::string spend_text(std::int64_t tokens, double dollars) const;
  double elapsed() const;

  mutable std::mutex mu_;
  int total_, done_ = 0, running_ = 0, correct_ = 0, faster_ = 0, done_here_ = 0;
  std::int64_t tokens_ = 0;
  double dollars_ = 0;
  std::map<std::string, spend> episodes_;  ///< what each running episode spent in this invocation
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::FILE* out_;
  progress_mode mode_;
  bool prices_known_;
  std::jthread ticker_;
};

}  // namespace pk::run
