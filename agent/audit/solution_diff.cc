#include "agent/audit/solution_diff.h"

#include <sstream>

#include <dtl/dtl.hpp>
#include <fmt/format.h>

#include "agent/audit/html_text.h"

namespace pk::audit {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

diff_line line_of(const std::pair<std::string, dtl::elemInfo>& e) {
  const auto t = e.second.type;
  return {t == dtl::SES_ADD ? diff_line::added : t == dtl::SES_DELETE ? diff_line::removed : diff_line::same, e.first};
}

}  // namespace

std::vector<diff_hunk> line_diff(const std::string& before, const std::string& after) {
  dtl::Diff<std::string, std::vector<std::string>> d(lines_of(before), lines_of(after));
  d.onHuge();  // long files: dtl's linear-space mode
  d.compose();
  d.composeUnifiedHunks();
  std::vector<diff_hunk> out;
  for (const auto& h : d.getUniHunks()) {
    diff_hunk hunk{h.a, h.b, h.c, h.d, {}};
    for (const auto& e : h.common[0]) hunk.lines.push_back(line_of(e));
    for (const auto& e : h.change) hunk.lines.push_back(line_of(e));
    for (const auto& e : h.common[1]) hunk.lines.push_back(line_of(e));
    out.push_back(std::move(hunk));
  }
  return out;
}

std::string diff_html(const std::vector<diff_hunk>& hunks) {
  if (hunks.empty()) return "<p class=\"meta\">solution.py unchanged since the previous check.</p>\n";
  std::string s = "<pre class=\"diff\">";
  for (const auto& h : hunks) {
    s += fmt::format("<span class=\"gap\">@@ -{},{} +{},{} @@</span>", h.old_start, h.old_count, h.new_start,
                     h.new_count);
    for (const auto& l : h.lines) {
      const char* cls = l.type == diff_line::added ? "add" : l.type == diff_line::removed ? "del" : nullptr;
      const char sign = l.type == diff_line::added ? '+' : l.type == diff_line::removed ? '-' : ' ';
      if (cls) s += fmt::format("<span class=\"{}\">{}{}</span>", cls, sign, escape(l.text));
      else s += fmt::format("{}{}\n", sign, escape(l.text));
    }
  }
  return s + "</pre>\n";
}

}  // namespace pk::audit
