#include "bench/report/markdown.h"

#include <fmt/format.h>

namespace pk::report {
namespace {

std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

void render_table(std::string& out, const table& t) {
  out += "|";
  for (const auto& h : t.header) out += " " + cell(h) + " |";
  out += "\n|";
  for (std::size_t i = 0; i < t.header.size(); ++i) out += i < t.numeric.size() && t.numeric[i] ? "---:|" : "---|";
  out += "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (const auto& c : row) out += " " + cell(c) + " |";
    out += "\n";
  }
}

}  // namespace

std::string render_markdown(const document& doc) {
  std::string out = "# " + doc.title + "\n";
  for (const auto& s : doc.sections) {
    out += fmt::format("\n{} {}\n", std::string(static_cast<std::size_t>(s.level), '#'), s.title);
    for (const auto& b : s.blocks) {
      out += "\n";
      switch (b.type) {
        case block::kind::paragraph: out += b.text + "\n"; break;
        case block::kind::table: render_table(out, b.data); break;
        case block::kind::list:
          for (const auto& item : b.items) out += "- " + item + "\n";
          break;
      }
    }
  }
  return out;
}

}  // namespace pk::report
