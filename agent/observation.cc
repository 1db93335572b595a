#include "agent/observation.h"

#include <algorithm>

#include <fmt/format.h>

namespace pk::agent {
namespace {

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

std::string head_tail(const std::string& text, std::uint64_t total_bytes, std::uint64_t max_bytes,
                      const std::string& stream, const prompt_set& prompts) {
  if (total_bytes <= max_bytes && text.size() <= max_bytes) return text;
  // The sandbox keeps far more head and tail than we show, so both halves are real bytes.
  std::size_t head = std::min<std::size_t>(max_bytes / 2, text.size());
  while (head > 0 && head < text.size() && continuation(text[head])) --head;
  std::size_t tail_start = text.size() - std::min<std::size_t>(max_bytes - max_bytes / 2, text.size());
  tail_start = std::max(tail_start, head);
  while (tail_start < text.size() && continuation(text[tail_start])) ++tail_start;
  std::uint64_t shown = head + (text.size() - tail_start);
  std::uint64_t total = std::max<std::uint64_t>(total_bytes, text.size());
  std::string marker = prompts.truncated.render({{"omitted_bytes", std::to_string(total - shown)},
                                                 {"total_bytes", std::to_string(total)},
                                                 {"stream", stream}});
  if (!marker.empty() && marker.back() == '\n') marker.pop_back();
  return text.substr(0, head) + marker + "\n" + text.substr(tail_start);
}

std::string render_observation(const sandbox::result& r, const agent_config& cfg,
                               const prompt_set& prompts) {
  auto strip_newline = [](std::string s) {
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  };
  bool killed_by_us = r.timed_out || r.oom_killed;
  return prompts.observation.render({
      {"exit_code", std::to_string(r.exit_code)},
      {"stdout", strip_newline(head_tail(r.out.text, r.out.total_bytes, cfg.stdout_bytes, "stdout", prompts))},
      {"stderr", strip_newline(head_tail(r.err.text, r.err.total_bytes, cfg.stderr_bytes, "stderr", prompts))},
      {"timed_out", r.timed_out ? "1" : ""},
      {"timeout_seconds", fmt::format("{:g}", cfg.limits.command_timeout_seconds)},
      {"oom_killed", r.oom_killed ? "1" : ""},
      {"signal", r.signal != 0 && !killed_by_us ? std::to_string(r.signal) : ""},
      {"note", r.note},
  });
}

std::uint64_t capture_bytes(const agent_config& cfg) {
  return std::max<std::uint64_t>({4 * cfg.stdout_bytes, 4 * cfg.stderr_bytes, 64 * 1024});
}

}  // namespace pk::agent
