#include "agent/audit/html_text.h"

#include <algorithm>

#include <fmt/format.h>

namespace pk::audit {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string output_block(std::string_view text, std::string_view label) {
  const auto lines = std::count(text.begin(), text.end(), '\n') + (text.empty() || text.back() == '\n' ? 0 : 1);
  const std::string pre = "<pre>" + escape(text) + "</pre>";
  if (lines <= fold_lines) return fmt::format("<div class=\"out\"><span class=\"label\">{}</span>{}</div>\n", escape(label), pre);
  return fmt::format("<details class=\"out\"><summary>{} ({} lines, folded)</summary>{}</details>\n", escape(label),
                     lines, pre);
}

std::string dollars_text(double dollars, bool known) {
  return known ? fmt::format("${:.4f}", dollars) : std::string("$ unknown");
}

namespace {

// Pre blocks wrap instead of widening the page: a 1300-px window never scrolls sideways.
constexpr const char* style = R"(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto; max-width: 1280px;
       padding: 0 16px; color: #222; background: #fff; }
h1 { font-size: 24px; margin-bottom: 4px; overflow-wrap: anywhere; } h2 { margin-top: 28px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }
th, td { border: 1px solid #d5d5d5; padding: 3px 6px; vertical-align: top; overflow-wrap: anywhere; }
th { background: #f3f5f8; text-align: left; overflow-wrap: normal; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; overflow-wrap: normal; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f7f7f7; border: 1px solid #e3e3e3;
      padding: 6px 8px; margin: 4px 0 10px; font-size: 12.5px; }
.step { border-left: 3px solid #9ab; padding: 2px 0 2px 12px; margin: 18px 0; }
.step h3 { margin: 4px 0; } .meta { color: #555; font-size: 13px; }
.label { display: block; color: #555; font-size: 12px; margin-top: 6px; }
details.out summary { cursor: pointer; color: #345; margin-top: 6px; }
.bad { color: #a11; font-weight: 600; } .good { color: #174; font-weight: 600; }
.diff .add { background: #e6ffec; display: block; } .diff .del { background: #ffebe9; display: block; }
.diff .gap { color: #888; display: block; }
.side { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.side > div { min-width: 0; }
nav a { margin-right: 12px; }
)";

}  // namespace

std::string page(std::string_view title, const std::string& body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{0}</title>\n<style>{1}</style>\n"
      "</head>\n<body>\n{2}</body>\n</html>\n",
      escape(title), style, body);
}

}  // namespace pk::audit
