// The live progress of a run: episodes done / running / queued, correct, faster, tokens, dollars,
// elapsed and ETA. On a terminal, one line redrawn in place; otherwise a plain line per event, so
// logs of CI and nohup runs stay readable.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace pk::run {

class progress {
 public:
  /// `out` is where lines go (stderr); `live`: redraw one line (a TTY) rather than log lines.
  progress(int total, int already_done, std::FILE* out, bool live, bool quiet);
  ~progress();

  void started(const std::string& episode);
  /// An episode's tokens and dollars grew (a model call came back).
  void spent(std::int64_t tokens, double dollars);
  void finished(const std::string& episode, const std::string& verdict, bool correct, bool faster,
                std::optional<double> speedup);
  void note(const std::string& line);
  /// Counts an episode finished by an earlier invocation (already in `already_done`).
  void restored(bool correct, bool faster, std::int64_t tokens, double dollars);  ///< a line of its own (warnings), above the live line

  std::string status_line() const;

 private:
  void draw_locked() const;
  void log_locked(const std::string& line) const;

  mutable std::mutex mu_;
  int total_, done_ = 0, running_ = 0, correct_ = 0, faster_ = 0, done_here_ = 0;
  std::int64_t tokens_ = 0;
  double dollars_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::FILE* out_;
  bool live_, quiet_;
  std::jthread ticker_;
};

}  // namespace pk::run
