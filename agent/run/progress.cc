#include "agent/run/progress.h"

#include <fmt/format.h>

namespace pk::run {

namespace {

std::string clock_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, s / 60 % 60);
  return fmt::format("{}m{:02}s", s / 60, s % 60);
}

}  // namespace

progress::progress(int total, int already_done, std::FILE* out, bool live, bool quiet)
    : total_(total), done_(already_done), out_(out), live_(live && !quiet), quiet_(quiet) {
  if (live_) {
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
  if (live_) {
    draw_locked();
    std::fputc('\n', out_);
  } else if (!quiet_) {
    log_locked(status_line());
  }
}

std::string progress::status_line() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int queued = total_ - done_ - running_;
  std::string eta = "-";
  if (done_here_ > 0 && done_ < total_) {
    // Episodes finished here so far, over the elapsed time, extrapolated to the rest.
    eta = clock_text(elapsed / done_here_ * (total_ - done_));
  } else if (done_ >= total_) {
    eta = "0m00s";
  }
  return fmt::format("[{}/{} done, {} running, {} queued] correct {} faster {} | {} tokens ${:.2f} | {} elapsed, ETA {}",
                     done_, total_, running_, queued, correct_, faster_, tokens_, dollars_, clock_text(elapsed), eta);
}

void progress::draw_locked() const {
  fmt::print(out_, "\r\033[K{}", status_line());
  std::fflush(out_);
}

void progress::log_locked(const std::string& line) const {
  if (quiet_) return;
  if (live_) fmt::print(out_, "\r\033[K{}\n", line), draw_locked();
  else fmt::print(out_, "{}\n", line);
  std::fflush(out_);
}

void progress::started(const std::string& episode) {
  std::lock_guard lock(mu_);
  ++running_;
  if (!live_) log_locked(fmt::format("start  {}  {}", episode, status_line()));
}

void progress::spent(std::int64_t tokens, double dollars) {
  std::lock_guard lock(mu_);
  tokens_ += tokens;
  dollars_ += dollars;
}

void progress::finished(const std::string& episode, const std::string& verdict, bool correct, bool faster,
                        std::optional<double> speedup) {
  std::lock_guard lock(mu_);
  --running_;
  ++done_;
  ++done_here_;
  correct_ += correct;
  faster_ += faster;
  log_locked(fmt::format("done   {}  {}{}  {}", episode, verdict,
                         speedup ? fmt::format(" {:.2f}x", *speedup) : std::string(), status_line()));
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
  if (quiet_) return;
  if (live_) fmt::print(out_, "\r\033[K{}\n", line), draw_locked();
  else fmt::print(out_, "{}\n", line);
  std::fflush(out_);
}

}  // namespace pk::run
