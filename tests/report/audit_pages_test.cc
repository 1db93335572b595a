// The audit pages as a reader sees them: two real runs (agent and zero-shot, the fake provider on
// loopback, problems 1-4, 2 samples, scored on CPU with gloo) reported with --html, the pages
// opened in headless Chromium (Debian's `chromium`) at 1300 px; and episodes ended by SIGTERM,
// SIGKILL and the wall-time limit rendered by `pkagent replay --format html`. The runs are made
// once, in one test (ctest runs each test in its own process), and kept cheap (--no-perf, one trial,
// a check only where a diff needs it, the two runs at once).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fake_provider.h"
#include "sandbox/sandbox.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* key_var = "PK_AUDIT_TEST_KEY";
constexpr int page_width = 1300;
// Untrusted text in replies: it must reach the pages as text, never as markup.
constexpr const char* hostile = "</script><img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>";

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

json tool_reply(const std::string& text, const std::string& command, double delay_s = 0) {
  // 1000 prompt tokens of which 400 were read from the provider's cache.
  json r = {{"text", text}, {"usage", {{"input", 1000}, {"cached_input", 400}, {"output", 100}}}};
  r["tool_calls"] = {command == "submit" ? json{{"name", "submit"}, {"arguments", json::object()}}
                                         : json{{"name", "bash"}, {"arguments", {{"command", command}}}}};
  if (delay_s > 0) r["delay_s"] = delay_s;
  return r;
}

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"})
    if (std::system(fmt::format("command -v {} >/dev/null 2>&1", name).c_str()) == 0) return name;
  return {};
}

struct suite_state {
  std::unique_ptr<pk::testkit::fake_provider> fake, fake_zs;
  fs::path dir, models, report;
  std::string skip;   // why the suite cannot run here
  std::string error;  // what went wrong making the runs
};
suite_state* state = nullptr;

// pkagent ARGS with stdout to LOG and stderr to LOG.err; returns its pid.
pid_t start_pkagent(const std::vector<std::string>& args, const fs::path& log) {
  const std::string exe = std::string(PKAGENT_BIN_DIR) + "/pkagent";
  const std::string out = log.string(), err = log.string() + ".err";
  std::vector<char*> argv{const_cast<char*>(exe.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

// Its exit status (128 + N when signal N ended it); -1 when it outlived `timeout_s` (then killed).
int wait_exit(pid_t pid, int timeout_s = 600) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool running(pid_t pid) { return ::waitpid(pid, nullptr, WNOHANG) == 0; }

int pkagent(const std::vector<std::string>& args, const fs::path& log) { return wait_exit(start_pkagent(args, log)); }

class audit_pages : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    state = new suite_state;
    if (auto why = pk::sandbox::unavailable_reason()) {
      state->skip = "the sandbox cannot run here: " + *why;
      return;
    }
    char tmpl[] = "/tmp/pkaudit-XXXXXX";
    if (!mkdtemp(tmpl)) {
      state->error = "mkdtemp failed";
      return;
    }
    state->dir = tmpl;
    // One provider per run: the two runs go at once, each with its own queue of replies.
    state->fake = std::make_unique<pk::testkit::fake_provider>();
    state->fake_zs = std::make_unique<pk::testkit::fake_provider>();
    setenv(key_var, "sk-audit-test-0123456789abcdef", 1);
    state->models = state->dir / "models.toml";
    std::ofstream models(state->models);
    for (const auto& [name, fake] : {std::pair{"fake", state->fake.get()}, std::pair{"fake-zs", state->fake_zs.get()}})
      models << fmt::format(R"([models.{}]
provider = "openai-chat"
base_url = "{}"
model = "fake-model"
api_key_env = "{}"
price = {{ input = 2.0, cached_input = 0.5, output = 10.0 }}
retry = {{ max_retries = 0 }}
)", name, fake->base_url(), key_var);
    models.close();

    // Agent, one episode at a time in sample-major order, so the script is per episode: problem 1
    // sample 0 checks a wrong solution, fixes it and checks again (a diff between checks); the
    // others copy the reference and submit (final scoring only).
    json replies = json::array();
    replies.push_back(tool_reply(std::string("First try. ") + hostile,
                                 "cp reference.py solution.py && sed -i 's/return out/return out * 2/' solution.py && "
                                 "pkb check"));
    replies.push_back(tool_reply("Doubled: wrong. Back to the sum.", "cp reference.py solution.py && pkb check"));
    replies.push_back(tool_reply("", "submit"));
    for (int i = 1; i < 8; ++i) {
      replies.push_back(tool_reply("Copy the reference.", "cp reference.py solution.py"));
      replies.push_back(tool_reply("", "submit"));
    }
    state->fake->load({{"replies", replies}});
    auto run = [](const std::string& mode, const std::string& model) {
      return std::vector<std::string>{"run", "--mode", mode, "--model", model, "--models", state->models.string(),
                                      "--problems", "1-4", "--samples", "2", "--device", "cpu", "--no-perf",
                                      "--trials", "1", "--check-trials", "1", "--jobs", "1", "-q", "--out",
                                      (state->dir / mode).string()};
    };
    json zs = json::array();
    for (int i = 0; i < 8; ++i)
      zs.push_back({{"text", std::string("Here it is. ") + hostile +
                                 "\n\n```python\nimport torch\nimport torch.distributed as dist\n\n\ndef solution(tensor):\n"
                                 "    out = tensor.clone()\n    dist.all_reduce(out)\n    return out\n```\n"},
                    {"usage", {{"input", 2000}, {"output", 300}}}});
    state->fake_zs->load({{"replies", zs}});
    const pid_t agent = start_pkagent(run("agent", "fake"), state->dir / "agent.log");
    const pid_t zeroshot = start_pkagent(run("zeroshot", "fake-zs"), state->dir / "zeroshot.log");
    const int agent_exit = wait_exit(agent), zeroshot_exit = wait_exit(zeroshot);
    if (agent_exit != 0) state->error = "the agent run failed: " + read_file(state->dir / "agent.log.err");
    if (zeroshot_exit != 0) state->error += "the zero-shot run failed: " + read_file(state->dir / "zeroshot.log.err");
    if (!state->error.empty()) return;
    state->report = state->dir / "report.html";
    if (pkagent({"report", (state->dir / "agent").string(), (state->dir / "zeroshot").string(), "--html",
                 state->report.string()},
                state->dir / "report.log") != 0)
      state->error = "pkagent report failed: " + read_file(state->dir / "report.log.err");
  }
  static void TearDownTestSuite() {
    // Kept for a look at the pages and screenshots when PKAGENT_KEEP_AUDIT is set.
    if (state && !state->dir.empty() && !std::getenv("PKAGENT_KEEP_AUDIT")) fs::remove_all(state->dir);
    delete state;
    state = nullptr;
  }
  void SetUp() override {
    if (!state->skip.empty()) GTEST_SKIP() << state->skip;
    ASSERT_TRUE(state->error.empty()) << state->error;
  }
  static fs::path pages() { return state->dir / "report-pages"; }
};

// The hrefs of a page (its DOM as Chromium dumped it, or its file).
std::vector<std::string> hrefs(const std::string& html) {
  static const std::regex href(R"(<a [^>]*href="([^"]+)\")");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), href); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1].str());
  return out;
}

// Every link of `page` names a file that exists, and an anchor (#step-7) an id in that file.
void expect_links_resolve(const fs::path& page, const std::string& html) {
  for (const std::string& h : hrefs(html)) {
    const auto hash = h.find('#');
    const std::string file = h.substr(0, hash);
    const fs::path target = file.empty() ? page : (page.parent_path() / file).lexically_normal();
    ASSERT_TRUE(fs::is_regular_file(target)) << page << " links to " << h << ", which does not exist";
    if (hash != std::string::npos) {
      EXPECT_NE(read_file(target).find("id=\"" + h.substr(hash + 1) + "\""), std::string::npos)
          << page << " links to " << h << ", an anchor its target lacks";
    }
  }
}

struct browser_view {
  std::string dom;
  int scroll_width = -1;
  int steps = -1;
  int images = -1;
  std::string title;
  int dom_status = -1, shot_status = -1;  // of the two chromium calls (timeout: 124)
};

// Opens a copy of `page` (beside it, so relative links hold) with a script appended that records
// what a reader's window shows into <body>'s attributes; --dump-dom prints the DOM after it ran.
browser_view open_in_chromium(const std::string& chromium, const fs::path& page, const fs::path& screenshot) {
  const fs::path probe = page.parent_path() / ("probe-" + page.filename().string());
  std::string html = read_file(page);
  html.insert(html.rfind("</body>"),
              "<script>var b=document.body;b.setAttribute('data-scroll-width',document.documentElement.scrollWidth);"
              "b.setAttribute('data-steps',document.querySelectorAll('section.step').length);"
              "b.setAttribute('data-images',document.images.length);"
              "b.setAttribute('data-title',document.title);</script>\n");
  std::ofstream(probe) << html;
  const fs::path profile = state->dir / "chromium-profile";
  const std::string common = fmt::format(
      "timeout 60 {} --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --user-data-dir={} "
      "--window-size={},1600",
      chromium, profile.string(), page_width);
  const fs::path dom = state->dir / "dom.html";
  browser_view v;
  v.dom_status = std::system(fmt::format("{} --dump-dom file://{} >{} 2>/dev/null", common, probe.string(), dom.string()).c_str());
  v.shot_status = std::system(
      fmt::format("{} --screenshot={} file://{} >/dev/null 2>&1", common, screenshot.string(), page.string()).c_str());
  fs::remove(probe);
  v.dom = read_file(dom);
  std::smatch m;
  auto attr = [&](const char* name) -> std::string {
    return std::regex_search(v.dom, m, std::regex(std::string(name) + R"(="([^"]*)\")")) ? m[1].str() : std::string();
  };
  if (auto s = attr("data-scroll-width"); !s.empty()) v.scroll_width = std::stoi(s);
  if (auto s = attr("data-steps"); !s.empty()) v.steps = std::stoi(s);
  if (auto s = attr("data-images"); !s.empty()) v.images = std::stoi(s);
  v.title = attr("data-title");
  return v;
}

void report_links_every_result(const fs::path& pages_dir) {
  const std::string report = read_file(state->report);
  std::set<std::string> episode_links;
  for (const auto& h : hrefs(report))
    if (h.find("/episodes/") != std::string::npos) episode_links.insert(h);
  EXPECT_EQ(episode_links.size(), 16u) << "8 agent and 8 zero-shot results";
  expect_links_resolve(state->report, report);
  for (const auto& dir : {"episodes", "problems", "compare"})
    for (const auto& f : fs::directory_iterator(pages_dir / dir)) expect_links_resolve(f.path(), read_file(f.path()));
  // Each problem page shows both runs and reaches a step-by-step comparison.
  const std::string p1 = read_file(pages_dir / "problems" / "1_allreduce.html");
  EXPECT_NE(p1.find("agent · fake"), std::string::npos);
  EXPECT_NE(p1.find("zeroshot · fake-zs"), std::string::npos);
  EXPECT_NE(p1.find("../compare/1_allreduce-r1-r2-s0.html"), std::string::npos) << p1;
}

void episode_page_shows_steps_diff_cached_tokens_and_verdict(const fs::path& pages_dir) {
  const std::string page = read_file(pages_dir / "episodes" / "r1-1_allreduce-s0.html");
  for (int n = 1; n <= 3; ++n) EXPECT_NE(page.find(fmt::format("id=\"step-{}\"", n)), std::string::npos) << n;
  EXPECT_NE(page.find("pkb check, exit 1"), std::string::npos) << "the wrong first check";
  EXPECT_NE(page.find("pkb check, exit 0"), std::string::npos) << "the fixed second check";
  // solution.py between the checks: the doubled line removed, the sum back.
  EXPECT_NE(page.find("<span class=\"del\">-    return out * 2</span>"), std::string::npos) << page;
  EXPECT_NE(page.find("<span class=\"add\">+    return out</span>"), std::string::npos);
  // Cached input tokens counted and priced: 600 x $2 + 400 x $0.5 + 100 x $10 per million.
  EXPECT_NE(page.find("1000 in (400 cached) / 100 out tokens, $0.0024"), std::string::npos);
  EXPECT_NE(page.find("submitted"), std::string::npos);
  EXPECT_NE(page.find("correct (final scoring on hidden inputs)"), std::string::npos);
  // The hostile reply is text.
  EXPECT_EQ(page.find(hostile), std::string::npos);
  EXPECT_NE(page.find("&lt;/script&gt;&lt;img src=x onerror="), std::string::npos);
}

// Returns why it did not look, or empty.
std::string chromium_shows_the_pages_whole(const fs::path& pages_dir) {
  const std::string chromium = find_chromium();
  if (chromium.empty()) return "no chromium on PATH (Debian package chromium; scripts/install-deps installs it)";
  struct want {
    fs::path page;
    int steps;
  };
  const std::vector<want> wanted = {{state->report, 0},
                                    {pages_dir / "episodes" / "r1-1_allreduce-s0.html", 3},
                                    {pages_dir / "episodes" / "r2-1_allreduce-s0.html", 1},
                                    {pages_dir / "problems" / "1_allreduce.html", 0},
                                    {pages_dir / "compare" / "1_allreduce-r1-r2-s0.html", 3}};
  for (const auto& w : wanted) {
    const fs::path png = state->dir / (w.page.stem().string() + ".png");
    const browser_view v = open_in_chromium(chromium, w.page, png);
    if (v.dom_status != 0 || v.shot_status != 0 || v.scroll_width <= 0) {
      ADD_FAILURE() << w.page << ": chromium failed or timed out (--dump-dom " << v.dom_status << ", --screenshot "
                    << v.shot_status << ") or showed nothing:\n" << v.dom.substr(0, 400);
      continue;
    }
    EXPECT_LE(v.scroll_width, page_width) << w.page << " scrolls sideways at " << page_width << " px";
    EXPECT_EQ(v.steps, w.steps) << w.page;
    EXPECT_EQ(v.images, 0) << w.page << ": markup from a reply was rendered";
    EXPECT_EQ(v.title.find("pwned"), std::string::npos) << w.page << ": a script from a reply ran";
    expect_links_resolve(w.page, v.dom);
    EXPECT_GT(fs::file_size(png), 10000u) << png;
    std::printf("screenshot: %s\n", png.c_str());
  }
  return {};
}

// One test, so that ctest (a process per test) makes the two runs once.
TEST_F(audit_pages, TwoRunsReportAndPagesAsAReaderSeesThem) {
  {
    SCOPED_TRACE("the report links every result");
    report_links_every_result(pages());
  }
  {
    SCOPED_TRACE("an agent episode's page");
    episode_page_shows_steps_diff_cached_tokens_and_verdict(pages());
  }
  SCOPED_TRACE("in Chromium");
  if (const std::string why = chromium_shows_the_pages_whole(pages()); !why.empty()) GTEST_SKIP() << why;
}

// Episodes that end abnormally keep every finished step, and their page says how they ended.
class ended_episode : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = pk::sandbox::unavailable_reason()) GTEST_SKIP() << "the sandbox cannot run here: " << *why;
    char tmpl[] = "/tmp/pkended-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    setenv(key_var, "sk-audit-test-0123456789abcdef", 1);
    std::ofstream(dir_ / "models.toml") << fmt::format(R"([models.fake]
provider = "openai-chat"
base_url = "{}"
model = "fake-model"
api_key_env = "{}"
price = {{ input = 2.0, cached_input = 0.5, output = 10.0 }}
retry = {{ max_retries = 0 }}
)", fake_.base_url(), key_var);
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }
  std::vector<std::string> episode_args(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> a = {"episode", "--model", "fake", "--models", (dir_ / "models.toml").string(),
                                  "--workspace", std::string(PKAGENT_SOURCE_DIR) + "/prompts/demo/workspace",
                                  "--task", "Say hello.", "-q", "--out", (dir_ / "ep").string()};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  // Starts an episode whose second reply takes 60 s, waits for step 1's observation, sends `sig`.
  void kill_after_step_one(int sig) {
    fake_.load({{"replies", {tool_reply("Step one.", "echo one"), tool_reply("", "echo two", 60)}}});
    const pid_t pid = start_pkagent(episode_args(), dir_ / "ep.log");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline &&
           read_file(dir_ / "ep" / "transcript.jsonl").find("\"type\":\"observation\"") == std::string::npos)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const bool alive = running(pid);
    if (alive) ::kill(pid, sig);
    const int status = wait_exit(pid, 60);
    ASSERT_TRUE(alive) << "the episode ended before the signal: " << read_file(dir_ / "ep.log.err");
    EXPECT_EQ(status, 128 + sig) << "pkagent did not die of the signal";
  }
  std::string page() {
    const fs::path html = dir_ / "page.html";
    EXPECT_EQ(pkagent({"replay", (dir_ / "ep").string(), "--format", "html"}, html), 0) << read_file(html.string() + ".err");
    return read_file(html);
  }
  pk::testkit::fake_provider fake_;
  fs::path dir_;
};

TEST_F(ended_episode, SigtermKeepsFinishedStepsAndThePageSaysSo) {
  kill_after_step_one(SIGTERM);
  const std::string p = page();
  EXPECT_NE(p.find("id=\"step-1\""), std::string::npos);
  EXPECT_NE(p.find("echo one"), std::string::npos);
  EXPECT_NE(p.find("unfinished: the transcript stops after step 1 without an outcome"), std::string::npos) << p;
  EXPECT_NE(p.find("SIGTERM"), std::string::npos);
}

TEST_F(ended_episode, SigkillKeepsFinishedStepsAndThePageSaysSo) {
  kill_after_step_one(SIGKILL);
  const std::string p = page();
  EXPECT_NE(p.find("id=\"step-1\""), std::string::npos);
  EXPECT_NE(p.find("unfinished: the transcript stops after step 1 without an outcome"), std::string::npos) << p;
}

TEST_F(ended_episode, WallTimeLimitIsTheStatedEnd) {
  fake_.load({{"replies", {tool_reply("Slow step.", "sleep 3"), tool_reply("", "echo late")}}});
  EXPECT_EQ(pkagent(episode_args({"--set", "limits.wall_seconds=1"}), dir_ / "ep.log"), 1)
      << read_file(dir_ / "ep.log.err");
  const std::string p = page();
  EXPECT_NE(p.find("id=\"step-1\""), std::string::npos);
  EXPECT_NE(p.find("wall_time_limit"), std::string::npos) << p;
}

}  // namespace
