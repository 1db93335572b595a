#include "agent/run/progress.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace pk::run {

namespace {

std::string clock_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, s / 60 % 60);
  return fmt::format("{}m{:02}s", s / 60, s % 60);
}

std::string count_text(std::int64_t n) {
  if (n >= 1'000'000) return fmt::format("{:.1f}M", static_cast<double>(n) / 1e6);
  if (n >= 10'000) return fmt::format("{:.1f}k", static_cast<double>(n) / 1e3);
  return std::to_string(n);
}

std::string first_line(const std::string& s, std::size_t max = 80) {
  std::string line = s.substr(0, s.find('\n'));
  if (line.size() < s.size() && line.size() < max) line += " ...";
  return line.size() > max ? line.substr(0, max - 3) + "..." : line;
}

std::string step_text(const step_report& s) {
  std::string what = s.action == "bash" ? "bash: " + first_line(s.command) : s.action;
  if (s.cut) what += " (reply cut at the output token limit)";
  if (s.exit_code)
    what += fmt::format(" -> exit {}{} ({:.1f} s)", *s.exit_code, s.timed_out ? ", timed out" : "", s.wall_seconds);
  return what;
}

}  // namespace

progress_mode progress_mode_for(std::string_view format, bool quiet, bool terminal) {
  if (format != "text" && format != "json")
    throw std::invalid_argument(fmt::format("--progress {}: use text or json", format));
  if (quiet) return progress_mode::quiet;
  if (format == "json") return progress_mode::json;
  return terminal ? progress_mode::live : progress_mode::lines;
}

progress::progress(int total, int already_done, std::FILE* out, progress_mode mode, bool prices_known)
    : total_(total), done_(already_done), out_(out), mode_(mode), prices_known_(prices_known) {
  if (mode_ == progress_mode::live) {
    ticker_ = std::jthread([this](std::stop_token st) {
      while (!st.stop_requested()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        std::lock_guard lock(mu_);
        draw_locked();
      }
    });
  }
}

progress::~progress() {
  if (ticker_.joinable()) {
    ticker_.request_stop();
    ticker_.join();
  }
  std::lock_guard lock(mu_);
  switch (mode_) {
    case progress_mode::live:
      draw_locked();
      std::fputc('\n', out_);
      break;
    case progress_mode::lines: log_locked(status_line()); break;
    case progress_mode::json:
      emit_locked({{"event", "status"}, {"done", done_}, {"total", total_}, {"correct", correct_},
                   {"faster", faster_}, {"tokens", tokens_},
                   {"dollars", prices_known_ ? nlohmann::json(dollars_) : nlohmann::json()}});
      break;
    case progress_mode::quiet: break;
  }
}

double progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string progress::spend_text(std::int64_t tokens, double dollars) const {
  if (!prices_known_) return fmt::format("{} tokens $ unknown", count_text(tokens));
  // Cents hide what one step of a cheap model costs.
  return fmt::format("{} tokens ${:.{}f}", count_text(tokens), dollars, dollars < 1 ? 4 : 2);
}

std::string progress::status_line() const {
  const double seconds = elapsed();
  const int queued = total_ - done_ - running_;
  std::string eta = "-";
  if (done_here_ > 0 && done_ < total_) {
    // Episodes finished here so far, over the elapsed time, extrapolated to the rest.
    eta = clock_text(seconds / done_here_ * (total_ - done_));
  } else if (done_ >= total_) {
    eta = "0m00s";
  }
  return fmt::format("[{}/{} done, {} running, {} queued] correct {} faster {} | {} | {} elapsed, ETA {}", done_,
                     total_, running_, queued, correct_, faster_, spend_text(tokens_, dollars_), clock_text(seconds),
                     eta);
}

void progress::draw_locked() const {
  fmt::print(out_, "\r\033[K{}", status_line());
  std::fflush(out_);
}

void progress::log_locked(const std::string& line) const {
  if (mode_ == progress_mode::live) fmt::print(out_, "\r\033[K{}\n", line), draw_locked();
  else if (mode_ == progress_mode::lines) fmt::print(out_, "{}\n", line);
  std::fflush(out_);
}

void progress::emit_locked(nlohmann::json event) const {
  event["elapsed_s"] = std::round(elapsed() * 10) / 10;
  fmt::print(out_, "{}\n", event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  std::fflush(out_);
}

void progress::started(const std::string& episode) {
  std::lock_guard lock(mu_);
  ++running_;
  episodes_[episode] = {};
  if (mode_ == progress_mode::json) emit_locked({{"event", "start"}, {"episode", episode}});
  else if (mode_ == progress_mode::lines) log_locked(fmt::format("start  {}  {}", episode, status_line()));
}

void progress::spent(const std::string& episode, std::int64_t tokens, double dollars) {
  std::lock_guard lock(mu_);
  tokens_ += tokens;
  dollars_ += dollars;
  spend& e = episodes_[episode];
  e.tokens += tokens;
  e.dollars += dollars;
}

void progress::step(const std::string& episode, const step_report& s) {
  std::lock_guard lock(mu_);
  const spend e = episodes_[episode];
  if (mode_ == progress_mode::json) {
    nlohmann::json j = {{"event", "step"}, {"episode", episode}, {"step", s.step}, {"replayed", s.replayed},
                        {"action", s.action}, {"cut", s.cut}, {"tokens", e.tokens},
                        {"dollars", prices_known_ ? nlohmann::json(e.dollars) : nlohmann::json()}};
    if (s.action == "bash") j["command"] = s.command;
    if (s.exit_code)
      j.update({{"exit_code", *s.exit_code}, {"timed_out", s.timed_out}, {"wall_seconds", s.wall_seconds}});
    return emit_locked(std::move(j));
  }
  if (mode_ == progress_mode::quiet) return;
  log_locked(fmt::format("step {:>3}{}  {}  {}  | {}", s.step, s.replayed ? " (replayed)" : "", episode,
                         step_text(s), spend_text(e.tokens, e.dollars)));
}

void progress::finished(const std::string& episode, const episode_report& r) {
  std::lock_guard lock(mu_);
  --running_;
  ++done_;
  ++done_here_;
  correct_ += r.correct;
  faster_ += r.faster;
  episodes_.erase(episode);
  if (mode_ == progress_mode::json) {
    nlohmann::json j = {{"event", "done"},       {"episode", episode},   {"verdict", r.verdict},
                        {"correct", r.correct},  {"faster", r.faster},   {"end_reason", r.end_reason},
                        {"steps", r.steps},      {"tokens", r.tokens},
                        {"dollars", prices_known_ ? nlohmann::json(r.dollars) : nlohmann::json()},
                        {"speedup", r.speedup ? nlohmann::json(*r.speedup) : nlohmann::json()}};
    return emit_locked(std::move(j));
  }
  if (mode_ == progress_mode::quiet) return;
  log_locked(fmt::format("done   {}  {}{}  ended {} after {} step{}, {}  {}", episode, r.verdict,
                         r.speedup ? fmt::format(" {:.2f}x", *r.speedup) : std::string(),
                         r.end_reason.empty() ? "?" : r.end_reason, r.steps, r.steps == 1 ? "" : "s",
                         spend_text(r.tokens, r.dollars), status_line()));
}

void progress::restored(bool correct, bool faster, std::int64_t tokens, double dollars) {
  std::lock_guard lock(mu_);
  correct_ += correct;
  faster_ += faster;
  tokens_ += tokens;
  dollars_ += dollars;
}

void progress::note(const std::string& line) {
  std::lock_guard lock(mu_);
  if (mode_ == progress_mode::json) emit_locked({{"event", "note"}, {"message", line}});
  else if (mode_ != progress_mode::quiet) log_locked(line);
}

}  // namespace pk::run
