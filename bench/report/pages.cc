#include "bench/report/pages.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "agent/audit/comparison_page.h"
#include "agent/audit/episode_page.h"
#include "agent/audit/html_text.h"
#include "bench/report/format.h"

namespace pk::report {
namespace fs = std::filesystem;
using audit::escape;

namespace {

void write_text(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out || !out.write(text.data(), static_cast<std::streamsize>(text.size())) || !out.flush())
    throw std::invalid_argument(fmt::format("{}: cannot write", file.string()));
}

std::string problem_name(const metrics::episode_result& r) { return fmt::format("{}_{}", r.problem_id, r.stem); }

fs::path run_dir(const report_run& run) {
  return fs::is_directory(run.dir) ? run.dir : run.dir.parent_path();
}

std::string result_text(const metrics::episode_result& r) {
  std::string s = metrics::verdict_with_reason(r);
  if (r.speedup) s += " " + speedup(*r.speedup);
  return s;
}

struct loaded {
  std::size_t run = 0;
  const metrics::episode_result* result = nullptr;
  std::optional<audit::episode_data> data;
  std::string file;  ///< its page's name under episodes/
};

}  // namespace

written_pages write_pages(const run_set& set, const fs::path& report_file) {
  written_pages w;
  w.dir = report_file.parent_path() / (report_file.stem().string() + "-pages");
  fs::remove_all(w.dir);
  fs::create_directories(w.dir / "episodes");
  fs::create_directories(w.dir / "problems");
  fs::create_directories(w.dir / "compare");
  const std::string folder = w.dir.filename().string();
  const std::string report_href = "../../" + report_file.filename().string();

  std::vector<loaded> episodes;
  std::map<int, std::string> stems;
  for (std::size_t i = 0; i < set.runs.size(); ++i)
    for (const auto& r : set.runs[i].results) {
      loaded e{i, &r, std::nullopt, fmt::format("r{}-{}-s{}.html", i + 1, problem_name(r), r.sample)};
      stems[r.problem_id] = problem_name(r);
      const fs::path transcript = run_dir(set.runs[i]) / r.transcript;
      if (!r.transcript.empty() && fs::is_regular_file(transcript)) {
        try {
          e.data = audit::load_episode(transcript);
        } catch (const std::exception&) {
          e.data.reset();  // unreadable: the report row says "no transcript"
        }
      }
      episodes.push_back(std::move(e));
    }

  for (auto& e : episodes) {
    if (!e.data) continue;
    const std::string problem_href = "../problems/" + stems[e.result->problem_id] + ".html";
    audit::page_links links{{{report_href, "report"}, {problem_href, "problem " + stems[e.result->problem_id]}}};
    write_text(w.dir / "episodes" / e.file, audit::render_episode_page(*e.data, links));
    w.episodes[{e.run, e.result->problem_id, e.result->sample}] = folder + "/episodes/" + e.file;
    ++w.pages;
  }

  // Compared pairs: sample k of run a against sample k of run b, for every pair the report compares.
  std::map<int, std::vector<std::pair<std::string, std::string>>> compares;  // problem -> (href, text)
  auto find = [&](std::size_t run, int problem, int sample) -> const loaded* {
    for (const auto& e : episodes)
      if (e.run == run && e.result->problem_id == problem && e.result->sample == sample && e.data) return &e;
    return nullptr;
  };
  for (const auto& [a, b] : set.comparisons)
    for (const auto& ea : episodes) {
      if (ea.run != a || !ea.data) continue;
      const loaded* eb = find(b, ea.result->problem_id, ea.result->sample);
      if (!eb) continue;
      const std::string name = fmt::format("{}-r{}-r{}-s{}.html", stems[ea.result->problem_id], a + 1, b + 1,
                                           ea.result->sample);
      const std::string label_a = fmt::format("{}, sample {}", set.runs[a].label, ea.result->sample);
      const std::string label_b = fmt::format("{}, sample {}", set.runs[b].label, eb->result->sample);
      audit::page_links links{{{report_href, "report"}, {"../problems/" + stems[ea.result->problem_id] + ".html",
                                                          "problem " + stems[ea.result->problem_id]}}};
      write_text(w.dir / "compare" / name,
                 audit::render_comparison_page({&*ea.data, label_a, "../episodes/" + ea.file},
                                               {&*eb->data, label_b, "../episodes/" + eb->file}, links));
      compares[ea.result->problem_id].emplace_back("../compare/" + name, label_a + " vs " + label_b);
      ++w.pages;
    }

  for (const auto& [id, stem] : stems) {
    std::string b = audit::nav_html({{{report_href, "report"}}});
    b += fmt::format("<h1>Problem {}</h1>\n<table><thead><tr><th>run</th><th>samples</th><th>correct</th>"
                     "<th>best speedup</th><th>tokens (in + out)</th><th>dollars</th></tr></thead><tbody>\n",
                     escape(stem));
    for (std::size_t i = 0; i < set.runs.size(); ++i) {
      std::string samples;
      int n = 0, correct = 0, unpriced = 0;
      std::optional<double> best;
      std::int64_t tokens_used = 0;
      double spent = 0;
      for (const auto& e : episodes) {
        if (e.run != i || e.result->problem_id != id) continue;
        const auto& r = *e.result;
        ++n;
        correct += r.correct ? 1 : 0;
        if (r.correct && r.speedup) best = std::max(best.value_or(0.0), *r.speedup);
        tokens_used += r.tokens_in + r.tokens_out;
        spent += r.dollars;
        unpriced += r.dollars_known ? 0 : 1;
        const std::string text = fmt::format("sample {}: {}", r.sample, result_text(r));
        samples += e.data ? fmt::format("<li><a href=\"../episodes/{}\">{}</a></li>", escape(e.file), escape(text))
                          : fmt::format("<li>{} (no transcript)</li>", escape(text));
      }
      if (n == 0) continue;
      b += fmt::format("<tr><td>{}<ul>{}</ul></td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                       "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
                       escape(set.runs[i].label), samples, n, fraction(correct, n),
                       best ? speedup(*best) : std::string("—"), tokens(static_cast<double>(tokens_used)),
                       unpriced ? std::string("$ unknown") : dollars(spent));
    }
    b += "</tbody></table>\n";
    if (auto it = compares.find(id); it != compares.end()) {
      b += "<h2>Step by step</h2>\n<ul>\n";
      for (const auto& [href, text] : it->second)
        b += fmt::format("<li><a href=\"{}\">{}</a></li>\n", escape(href), escape(text));
      b += "</ul>\n";
    }
    write_text(w.dir / "problems" / (stem + ".html"), audit::page("Problem " + stem, b));
    w.problems[id] = folder + "/problems/" + stem + ".html";
    ++w.pages;
  }
  return w;
}

std::string episode_links_section(const run_set& set, const written_pages& pages) {
  std::string s = "<h2 id=\"episodes\">Episodes</h2>\n<p>Every result links to its episode's page (task, steps, "
                  "outputs, checks, verdict); a problem links to its runs side by side.</p>\n"
                  "<table><thead><tr><th>problem</th>";
  for (const auto& run : set.runs) s += "<th>" + escape(run.label) + "</th>";
  s += "</tr></thead><tbody>\n";
  std::map<int, std::string> names;
  for (const auto& run : set.runs)
    for (const auto& r : run.results) names[r.problem_id] = problem_name(r);
  for (const auto& [id, name] : names) {
    auto href = pages.problems.find(id);
    s += "<tr><td>" +
         (href != pages.problems.end() ? fmt::format("<a href=\"{}\">{}</a>", escape(href->second), escape(name))
                                       : escape(name)) +
         "</td>";
    for (std::size_t i = 0; i < set.runs.size(); ++i) {
      std::vector<const metrics::episode_result*> mine;
      for (const auto& r : set.runs[i].results)
        if (r.problem_id == id) mine.push_back(&r);
      std::sort(mine.begin(), mine.end(), [](auto* x, auto* y) { return x->sample < y->sample; });
      std::string cell;
      for (const auto* r : mine) {
        const std::string text = fmt::format("s{} {}", r->sample, result_text(*r));
        auto page = pages.episodes.find({i, id, r->sample});
        cell += page != pages.episodes.end()
                    ? fmt::format("<a href=\"{}\">{}</a><br>", escape(page->second), escape(text))
                    : escape(text) + " (no transcript)<br>";
      }
      s += "<td>" + cell + "</td>";
    }
    s += "</tr>\n";
  }
  return s + "</tbody></table>\n";
}

}  // namespace pk::report
