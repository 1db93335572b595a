#include "bench/report/cli.h"

#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>

#include "bench/report/document.h"
#include "bench/report/html.h"
#include "bench/report/markdown.h"
#include "bench/report/pages.h"
#include "bench/report/run_set.h"

namespace pk::report {
namespace {

struct report_options {
  std::vector<std::filesystem::path> runs;
  std::vector<std::string> labels;
  std::filesystem::path html;
  metrics::bootstrap_options bootstrap;
};

// Written beside the target and renamed into place, so a failed run never leaves half a page.
void write_file(const std::filesystem::path& file, const std::string& text) {
  auto tmp = file;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out || !out.write(text.data(), static_cast<std::streamsize>(text.size())) || !out.flush())
      throw std::invalid_argument(fmt::format("{}: cannot write (does its directory exist?)", file.string()));
  }
  std::filesystem::rename(tmp, file);
}

int run_report(const report_options& o) {
  auto set = load_runs(o.runs, o.bootstrap, o.labels);
  auto doc = build_document(set);
  written_pages pages;
  if (!o.html.empty()) {
    pages = write_pages(set, o.html);
    write_file(o.html, render_html(doc, set, episode_links_section(set, pages)));
  }
  fmt::print("{}", render_markdown(doc));
  std::fflush(stdout);
  if (!set.skipped.empty())
    fmt::print(stderr, "pkagent report: {} malformed result line(s) left out; the first: {}\n", set.skipped.size(),
               metrics::describe(set.skipped.front()));
  if (!o.html.empty())
    fmt::print(stderr, "pkagent report: wrote {} and {} page(s) in {}\n", o.html.string(), pages.pages,
               pages.dir.string());
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<report_options>();
  auto* cmd = app.add_subcommand(
      "report",
      "Summarise finished runs: per problem, per category and overall correct, fast_p, pass@k and fast_1@k, "
      "speedups and spend, runs side by side (agent against zero-shot at equal k and at equal spend). "
      "Markdown on stdout.");
  cmd->add_option("RUN_DIR", opts->runs, "Run directories (pkagent run --out DIR) or results.jsonl files")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--label", opts->labels,
                  "Short name of a run in tables and charts, one per RUN_DIR in order (default: mode · model, "
                  "shortened)");
  cmd->add_option("--html", opts->html, "Also write one HTML page with charts to this file, and beside it (FILE's stem + \"-pages/\") a page "
                  "per episode, per problem (runs side by side) and per compared pair of samples");
  cmd->add_option("--bootstrap", opts->bootstrap.replicates, "Bootstrap resamples for the 95% intervals")
      ->capture_default_str()
      ->check(CLI::Range(100, 1000000));
  cmd->add_option("--seed", opts->bootstrap.seed, "Seed of the bootstrap (same seed, same intervals)")
      ->capture_default_str();
  cmd->callback([opts, &exit_code] { exit_code = run_report(*opts); });
}

}  // namespace pk::report
