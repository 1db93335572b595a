#include "agent/run/pkb_tool/compiler_output.h"

#include <algorithm>
#include <regex>
#include <vector>

#include <fmt/format.h>

namespace pk::pkb {
namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

bool is_ptxas_info(std::string_view line) {
  return line.find("ptxas info") != std::string_view::npos ||
         line.find("bytes spill") != std::string_view::npos ||
         line.find("bytes smem") != std::string_view::npos;
}

}  // namespace

std::string shape_compiler_output(std::string_view text, const shaping& s) {
  static const std::regex error_line(R"((\berror\b|\bError\b|[A-Za-z]+Error:|Exception:|undefined reference))");
  const std::vector<std::string_view> lines = split_lines(text);
  const int n = static_cast<int>(lines.size());
  std::vector<bool> keep(lines.size(), false);
  int errors = 0, shown_errors = 0, ptxas = 0;
  bool traceback = false;
  for (int i = 0; i < n; ++i) {
    const std::string line(lines[i]);
    if (line.rfind("Traceback (most recent call last)", 0) == 0) traceback = true;
    if (is_ptxas_info(line)) {
      if (ptxas++ < s.max_ptxas) keep[i] = true;
      continue;
    }
    if (!std::regex_search(line, error_line)) continue;
    ++errors;
    if (shown_errors >= s.max_errors) continue;
    ++shown_errors;
    for (int j = std::max(0, i - s.context_before); j <= std::min(n - 1, i + s.context_after); ++j) keep[j] = true;
  }
  // No recognisable error: the end is where the cause usually is.
  if (errors == 0 || traceback)
    for (int j = std::max(0, n - s.traceback_tail); j < n; ++j) keep[j] = true;

  std::string out;
  int left_out = 0;
  bool gap = false;
  for (int i = 0; i < n; ++i) {
    if (!keep[i]) {
      ++left_out;
      gap = true;
      continue;
    }
    if (gap && !out.empty()) out += "  ...\n";
    gap = false;
    out.append(lines[i]);
    out += '\n';
  }
  if (left_out > 0 || errors > shown_errors || ptxas > s.max_ptxas)
    out += fmt::format("[{} of {} lines left out; {} error lines in all, {} shown with context; {} ptxas lines]\n",
                       left_out, n, errors, shown_errors, ptxas);
  return out;
}

}  // namespace pk::pkb
