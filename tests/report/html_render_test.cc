// The HTML report rendered by a real browser (headless Chromium, Debian's `chromium`): the page
// text must carry the report's numbers, and the screenshot must show the charts.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bench/report/document.h"
#include "bench/report/html.h"
#include "bench/report/run_set.h"

#ifdef PKAGENT_HAVE_PNG
#include <png.h>
#endif

namespace {

using namespace pk::report;
namespace fs = std::filesystem;

constexpr int page_width = 1300, page_height = 2400;

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    std::string probe = std::string("command -v ") + name + " >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) return name;
  }
  return {};
}

// Root in CI: Chromium's own sandbox needs --no-sandbox there. A private profile keeps runs apart.
std::string chromium_command(const std::string& chromium, const fs::path& dir) {
  return "timeout 120 " + chromium + " --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run" +
         " --user-data-dir=" + (dir / "profile").string() + " --window-size=" + std::to_string(page_width) + "," +
         std::to_string(page_height);
}

struct rendered {
  fs::path dir;
  std::string dom;
  int status = -1;
};

// The page as written, or with a script appended that records how wide the laid-out page is
// (document.documentElement.scrollWidth, as data-scroll-width on <body>) for --dump-dom to show.
std::string page_of(const std::vector<std::string>& runs, bool measure) {
  auto fixture = fs::path(PKAGENT_TEST_DATA) / "fixture";
  std::vector<fs::path> paths;
  for (const auto& r : runs) paths.push_back(fixture / r);
  auto set = load_runs(paths, {});
  std::string html = render_html(build_document(set), set);
  if (measure)
    html.insert(html.rfind("</body>"), "<script>document.body.setAttribute('data-scroll-width', "
                                       "document.documentElement.scrollWidth)</script>\n");
  return html;
}

// Writes the HTML report of the fixture `runs` and runs Chromium on it twice: --dump-dom and
// --screenshot.
rendered render(const std::string& chromium, const std::vector<std::string>& runs = {"agent", "zeroshot"},
                bool measure = false) {
  rendered r;
  r.dir = fs::temp_directory_path() / ("pk_html_" + std::to_string(::getpid()));
  fs::remove_all(r.dir);
  fs::create_directories(r.dir);
  std::ofstream(r.dir / "report.html") << page_of(runs, measure);

  auto common = chromium_command(chromium, r.dir);
  auto dom_cmd = common + " --dump-dom file://" + (r.dir / "report.html").string() + " 2>" +
                 (r.dir / "dom.err").string();
  FILE* pipe = ::popen(dom_cmd.c_str(), "r");
  if (pipe) {
    char buf[8192];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) r.dom.append(buf, n);
    ::pclose(pipe);
  }
  auto shot_cmd = common + " --screenshot=" + (r.dir / "report.png").string() + " file://" +
                  (r.dir / "report.html").string() + " >" + (r.dir / "shot.log").string() + " 2>&1";
  int status = std::system(shot_cmd.c_str());
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(html_report, chromium_renders_the_numbers_and_the_charts) {
  auto chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "no chromium on PATH (scripts/install-deps installs Debian's chromium)";
  auto r = render(chromium);

  // Page text, as the browser parsed it.
  ASSERT_FALSE(r.dom.empty()) << "chromium --dump-dom printed nothing; see " << (r.dir / "dom.err");
  for (const char* text : {"<title>pkagent report</title>", "agent · demo against zeroshot · demo", "pass@2",
                           "66.7% [", "41.7% [", "+25.0 pp [", "Primitive collectives (primitive)",
                           "pass@k and fast_1@k per run", "Speedup of correct solutions over the reference",
                           "Spend against success", "results.jsonl:5: problem.category"})
    EXPECT_NE(r.dom.find(text), std::string::npos) << "page lacks: " << text;
  std::size_t svgs = 0;
  for (auto at = r.dom.find("<svg"); at != std::string::npos; at = r.dom.find("<svg", at + 1)) ++svgs;
  EXPECT_EQ(svgs, 3u);

  ASSERT_EQ(r.status, 0) << "chromium --screenshot failed; see " << (r.dir / "shot.log");
  ASSERT_TRUE(fs::exists(r.dir / "report.png"));
#ifndef PKAGENT_HAVE_PNG
  GTEST_SKIP() << "built without libpng (libpng-dev): the screenshot's pixels were not checked";
#else
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  ASSERT_TRUE(png_image_begin_read_from_file(&image, (r.dir / "report.png").c_str())) << image.message;
  image.format = PNG_FORMAT_RGB;
  std::vector<unsigned char> pixels(PNG_IMAGE_SIZE(image));
  ASSERT_TRUE(png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr)) << image.message;
  EXPECT_EQ(image.width, static_cast<unsigned>(page_width));
  EXPECT_EQ(image.height, static_cast<unsigned>(page_height));

  // Not blank, not a solid fill, and both runs' chart colours drawn (lines, markers, bars).
  std::size_t ink = 0, blue = 0, red = 0, total = pixels.size() / 3;
  auto near = [](const unsigned char* p, int r, int g, int b) {
    return std::abs(p[0] - r) < 12 && std::abs(p[1] - g) < 12 && std::abs(p[2] - b) < 12;
  };
  for (std::size_t i = 0; i < total; ++i) {
    const unsigned char* p = &pixels[3 * i];
    ink += p[0] < 200 || p[1] < 200 || p[2] < 200;
    blue += near(p, 0x1f, 0x77, 0xb4);
    red += near(p, 0xd6, 0x27, 0x28);
  }
  EXPECT_GT(ink, total / 100) << "the screenshot is (nearly) blank";
  EXPECT_LT(ink, total / 2) << "the screenshot is mostly dark: not the report";
  EXPECT_GT(blue, 2000u) << "the agent run's colour is missing from the charts";
  EXPECT_GT(red, 2000u) << "the zero-shot run's colour is missing from the charts";
  fs::remove_all(r.dir);
#endif
}

// A long model name and a CPU run beside a GPU pair: nothing may push the page past 1300 px.
TEST(html_report, three_runs_fit_a_1300_px_page) {
  auto chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "no chromium on PATH (scripts/install-deps installs Debian's chromium)";
  auto r = render(chromium, {"agent", "zeroshot", "local_cpu"}, /*measure=*/true);
  const auto at = r.dom.find("data-scroll-width=\"");
  ASSERT_NE(at, std::string::npos) << "the measuring script did not run; see " << (r.dir / "dom.err");
  const int width = std::stoi(r.dom.substr(at + std::string("data-scroll-width=\"").size()));
  EXPECT_LE(width, page_width) << "the page is wider than the window: a table or chart overflows";
  EXPECT_NE(r.dom.find("CPU slot-s"), std::string::npos);
  fs::remove_all(r.dir);
}

}  // namespace
