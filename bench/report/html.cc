#include "bench/report/html.h"

#include <algorithm>

#include <fmt/format.h>

#include "bench/report/charts.h"
#include "bench/report/format.h"

namespace pk::report {
namespace {

std::string escape(const std::string& text) { return escape_xml(text); }

// Paragraphs carry markdown's **bold**; everything else is plain text.
std::string inline_text(const std::string& text) {
  std::string out;
  bool bold = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "**") == 0) {
      out += bold ? "</strong>" : "<strong>";
      bold = !bold;
      ++i;
    } else {
      out += escape(std::string(1, text[i]));
    }
  }
  if (bold) out += "</strong>";
  return out;
}

// Long names (problem stems, model ids, paths) may break after '_' and '/' instead of widening
// their column past the page.
std::string breakable(const std::string& text) {
  std::string out;
  for (char c : escape(text)) {
    out += c;
    if (c == '_' || c == '/') out += "<wbr>";
  }
  return out;
}

std::string render_table(const table& t) {
  std::string s = "<table>\n<thead><tr>";
  for (const auto& h : t.header) s += "<th>" + escape(h) + "</th>";
  s += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    s += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i)
      s += i < t.numeric.size() && t.numeric[i] ? "<td class=\"num\">" + escape(row[i]) + "</td>"
                                                : "<td>" + breakable(row[i]) + "</td>";
    s += "</tr>\n";
  }
  return s + "</tbody>\n</table>\n";
}

// Spend in dollars when every run paid at known prices, else tokens.
std::string spend_unit(const run_set& set) {
  bool dollars = std::all_of(set.runs.begin(), set.runs.end(),
                             [](const report_run& r) {
                               return r.summary.overall.total.dollars > 0 && r.summary.overall.total.unpriced == 0;
                             });
  return dollars ? "dollars" : "tokens";
}

// With one sample per problem a curve over k is a single point: say so, with the numbers.
std::vector<std::string> one_sample_lines(const run_set& set) {
  std::vector<std::string> lines = {"One sample per problem: curves over k need k >= 2 (pkagent run --samples K)."};
  for (const auto& r : set.runs) {
    const auto& g = r.summary.overall;
    if (g.pass_at_k.empty()) continue;
    lines.push_back(fmt::format("{}: pass@1 {}, fast_1@1 {}, {} per problem", r.label, percent(g.pass_at_k[0].value),
                                percent(g.fast_at_k[0][0].value),
                                g.total.unpriced ? tokens(g.tokens_per_problem) + " tokens"
                                                 : dollars(g.dollars_per_problem)));
  }
  return lines;
}

std::string charts(const run_set& set) {
  std::string s = "<section class=\"charts\">\n<h2>Charts</h2>\n";

  int most_k = 1;
  std::vector<series> pass;
  for (std::size_t i = 0; i < set.runs.size(); ++i) {
    const auto& r = set.runs[i];
    const auto& g = r.summary.overall;
    most_k = std::max(most_k, g.min_samples);
    series p{r.label + " pass@k", {}, run_color(i), false}, f{r.label + " fast_1@k", {}, run_color(i), true};
    for (int k = 1; k <= g.min_samples; ++k) {
      p.points.emplace_back(k, g.pass_at_k[static_cast<std::size_t>(k - 1)].value);
      f.points.emplace_back(k, g.fast_at_k[0][static_cast<std::size_t>(k - 1)].value);
    }
    pass.push_back(std::move(p));
    pass.push_back(std::move(f));
  }
  const std::string pass_title = "pass@k and fast_1@k per run";
  if (most_k == 1) {
    s += note_chart(pass_title, one_sample_lines(set));
  } else {
    s += line_chart(pass_title, axis{"k (samples per problem)", 1, static_cast<double>(most_k), false, false, false, true},
                    axis{"problems", 0, 1, false, false, true, false}, pass);
  }

  std::vector<histogram_group> groups;
  std::size_t speedups = 0;
  for (std::size_t i = 0; i < set.runs.size(); ++i) {
    histogram_group g{set.runs[i].label, run_color(i), {}};
    for (const auto& p : set.runs[i].summary.problems) g.values.insert(g.values.end(), p.speedups.begin(), p.speedups.end());
    speedups += g.values.size();
    groups.push_back(std::move(g));
  }
  const std::string speedup_title = "Speedup of correct solutions over the reference";
  if (speedups == 0)
    s += note_chart(speedup_title, {"No correct timed solution in these runs: no speedup to plot."});
  else
    s += log_histogram(speedup_title, "speedup (log scale)", groups, 1.0);

  auto unit = spend_unit(set);
  std::vector<series> spent;
  double lo = 0, hi = 0;
  for (std::size_t i = 0; i < set.runs.size(); ++i) {
    const auto& g = set.runs[i].summary.overall;
    double total = unit == "dollars" ? g.total.dollars : static_cast<double>(g.total.tokens());
    double per_sample = g.episodes ? total / g.episodes : 0;
    if (per_sample <= 0) continue;
    series line{set.runs[i].label, {}, run_color(i), false};
    for (int k = 1; k <= g.min_samples; ++k) {
      line.points.emplace_back(k * per_sample, g.pass_at_k[static_cast<std::size_t>(k - 1)].value);
      lo = lo == 0 ? k * per_sample : std::min(lo, k * per_sample);
      hi = std::max(hi, k * per_sample);
    }
    spent.push_back(std::move(line));
  }
  const std::string spend_title = "Spend against success: pass@k at k samples' cost";
  if (!spent.empty() && most_k == 1) {
    s += note_chart(spend_title, one_sample_lines(set));
  } else if (!spent.empty()) {
    axis x{unit == "dollars" ? "dollars per problem (log scale)" : "tokens per problem (log scale)", lo / 1.5, hi * 1.5,
           true, false, false, false};
    s += line_chart(spend_title, x, axis{"problems", 0, 1, false, false, true, false}, spent);
  }
  return s + "</section>\n";
}

constexpr const char* style = R"(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto; max-width: 1280px;
       padding: 0 16px; color: #222; background: #fff; }
h1 { font-size: 26px; margin-bottom: 4px; } h2 { margin-top: 32px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }
th, td { border: 1px solid #d5d5d5; padding: 4px 6px; vertical-align: top; }
th { background: #f3f5f8; text-align: left; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #fafafa; }
.charts svg { display: block; margin: 12px 0 20px; border: 1px solid #e5e5e5; }
)";

}  // namespace

std::string render_html(const document& doc, const run_set& set, const std::string& episodes) {
  std::string s = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{0}</title>\n<style>{1}</style>\n"
      "</head>\n<body>\n<h1>{0}</h1>\n",
      escape(doc.title), style);
  bool charts_done = false;
  for (const auto& sec : doc.sections) {
    s += fmt::format("<h{0}>{1}</h{0}>\n", sec.level, escape(sec.title));
    for (const auto& b : sec.blocks) {
      switch (b.type) {
        case block::kind::paragraph: s += "<p>" + inline_text(b.text) + "</p>\n"; break;
        case block::kind::table: s += render_table(b.data); break;
        case block::kind::list:
          s += "<ul>\n";
          for (const auto& item : b.items) s += "<li>" + escape(item) + "</li>\n";
          s += "</ul>\n";
          break;
      }
    }
    if (!charts_done && sec.title == "Overall") {  // charts right after the headline numbers
      s += charts(set);
      charts_done = true;
    }
  }
  return s + episodes + "</body>\n</html>\n";
}

}  // namespace pk::report
