#include "agent/replay.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "config/enum_names.h"

namespace pk::agent {
namespace {

// A fence longer than any backtick run inside `body`, so the block cannot end early.
std::string fenced(const std::string& body, const std::string& lang = "") {
  std::size_t longest = 0, run = 0;
  for (char c : body) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  std::string text = body;
  if (!text.empty() && text.back() != '\n') text += '\n';
  return fmt::format("{}{}\n{}{}\n", fence, lang, text, fence);
}

constexpr const char* no_verdict = "no verdict (nothing scored it: no check ran)";

std::string one_line(std::string s, std::size_t max = 80) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

}  // namespace

std::optional<std::string> verdict_text(const transcript_file& t) {
  std::ifstream in(t.path.parent_path() / "result.json");
  const json result = in ? json::parse(in, nullptr, false) : json();
  if (result.is_object() && result.contains("verdict")) {
    std::string s = fmt::format("verdict {} (final scoring on hidden inputs)", result.value("verdict", "?"));
    if (result.value("speedup", json()).is_number())
      s += fmt::format(", speedup {:.2f}x", result["speedup"].get<double>());
    return s;
  }
  for (const json& e : t.events)
    if (e["type"] == "evaluation")
      return fmt::format("verdict {} (the task's check, score {})", e.value("passed", false) ? "passed" : "failed",
                         e.value("score", json()).dump());
  return std::nullopt;
}

namespace {

// The reply ended because it reached the output token limit per reply.
bool cut_at_limit(const json& response) { return response.value("finish", "") == "length"; }

// Dollars as spent, or "$ unknown" for a model recorded without prices (a local server): $0 would
// read as free.
std::string dollars_text(const transcript_file& t, double dollars) {
  const json& h = t.header;
  const bool unknown = h.is_object() && h.contains("model") &&
                       !h["model"].value("prices_usd_per_mtok", json::object()).value("known", true);
  return unknown ? std::string("$ unknown") : fmt::format("${:.4f}", dollars);
}

std::string usage_line(const transcript_file& t, const json& r) {
  const json& u = r.value("usage", json::object());
  return fmt::format("{} in / {} out tokens, {}, {:.1f} s", u.value("input", 0), u.value("output", 0),
                     dollars_text(t, r.value("cost_usd", 0.0)), r.value("latency_ms", 0) / 1000.0);
}

std::string render_md(const transcript_file& t) {
  std::ostringstream md;
  const json& h = t.header;
  if (!h.is_null()) {
    md << fmt::format("# Episode `{}` with model `{}`\n\n", h["task"].value("id", "?"),
                      h["model"].value("name", "?"));
    md << fmt::format("- transcript format {} v{}, pkagent {} ({}), started {}\n", h.value("format", "?"),
                      h.value("version", 0), h["pkagent"].value("version", "?"),
                      h["pkagent"].value("commit", "?"), h.value("started_at", "?"));
    const json& c = h["config"];
    md << fmt::format("- action format `{}`; limits: {}\n", c.value("action_format", "?"),
                      c["limits"].dump());
    md << fmt::format("- host: {}\n", h["host"].dump());
    if (!h["parent"].is_null()) md << fmt::format("- parent: {}\n", h["parent"].dump());
    md << "\n## Task\n\n" << h["task"].value("text", "") << "\n";
  }
  for (const json& e : t.events) {
    const std::string type = e["type"];
    if (type == "request" && e.value("base_step", json()).is_null()) {
      for (const json& m : e["new_messages"])
        if (m.value("role", "") == "system")
          md << "\n<details><summary>System prompt</summary>\n\n" << fenced(m.value("text", ""), "text")
             << "\n</details>\n";
    } else if (type == "response") {
      const json& r = e["response"];
      md << fmt::format("\n## Step {}\n\n**Model**{} ({}){}:\n\n", e["step"].get<int>(),
                        e.value("replayed", false) ? " (replayed)" : "", usage_line(t, r),
                        cut_at_limit(r) ? ", **cut at the output token limit** (finish=length)" : "");
      // Model text is shown verbatim in a fence: markup in it (an open fence, "<|im_end|>") stays text.
      if (!r.value("text", "").empty()) md << fenced(r.value("text", ""), "text") << "\n";
      const json& a = e["action"];
      if (a["kind"] == "invalid")  // valid calls are shown as their action below
        for (const json& c : r.value("tool_calls", json::array()))
          md << "Tool call:\n\n" << fenced(c.value("name", "?") + " " + c.value("arguments_text", ""), "text")
             << "\n";
      if (a["kind"] == "bash") md << "Action: run\n\n" << fenced(a.value("command", ""), "bash");
      else if (a["kind"] == "submit") md << "Action: **submit**\n";
      else md << "Action: **format error**\n\n" << fenced(a.value("problem", json()).dump(), "json");
    } else if (type == "observation" && e.contains("text")) {
      md << fmt::format("\n**Observation**{}:\n\n",
                        e.contains("exit_code") ? fmt::format(" (exit {}, {:.2f} s)", e["exit_code"].get<int>(),
                                                              e.value("wall_seconds", 0.0))
                                                : std::string());
      md << fenced(e.value("text", ""), "text");
    } else if (type == "evaluation") {
      md << fmt::format("\n## Evaluation\n\npassed: {}, score: {}\n", e.value("passed", false),
                        e.value("score", json()).dump());
    }
  }
  if (t.finished()) {
    const json& o = t.outcome;
    const json& x = o["totals"];
    md << fmt::format("\n## Outcome\n\n**{}**: {} — {} steps, {}, {} in / {} out tokens, {}, "
                      "{:.1f} s wall\n",
                      o.value("reason", "?"), o.value("message", ""), o.value("steps", 0), verdict_text(t).value_or(no_verdict),
                      x.value("input_tokens", 0), x.value("output_tokens", 0), dollars_text(t, x.value("dollars", 0.0)),
                      x.value("wall_seconds", 0.0));
  } else {
    md << "\n## Outcome\n\n**unfinished**: the transcript ends before the episode did (crashed or "
          "still running); `pkagent episode --out DIR` on its directory resumes it.\n";
  }
  if (!t.problems.empty()) {
    md << "\n## Problems reading the transcript\n\n";
    for (const auto& p : t.problems) md << fmt::format("- line {}: {}\n", p.line, p.reason);
  }
  return md.str();
}

std::string render_text(const transcript_file& t) {
  std::ostringstream out;
  if (!t.header.is_null())
    out << fmt::format("task {}  model {}  format {}\n", t.header["task"].value("id", "?"),
                       t.header["model"].value("name", "?"), t.header["config"].value("action_format", "?"));
  for (const auto& [n, s] : t.steps) {
    std::string what = "(no response)";
    if (!s.response.is_null()) {
      const json& a = s.response["action"];
      what = a["kind"] == "bash" ? "bash: " + one_line(a.value("command", ""))
                                 : a["kind"].get<std::string>();
      if (cut_at_limit(s.response["response"])) what += " [cut at the output token limit]";
    }
    std::string result = s.observation.is_null() ? "" : s.observation.contains("exit_code")
        ? fmt::format(" -> exit {}", s.observation["exit_code"].get<int>()) : "";
    out << fmt::format("step {:>3}  {}{}\n", n, what, result);
  }
  out << (t.finished() ? fmt::format("outcome: {} ({}), {}\n", t.outcome.value("reason", "?"),
                                     t.outcome.value("message", ""), verdict_text(t).value_or(no_verdict))
                       : std::string("outcome: unfinished\n"));
  for (const auto& p : t.problems) out << fmt::format("problem: line {}: {}\n", p.line, p.reason);
  return out.str();
}

// One line of an observation as shown, and as compared: what a re-execution measures anew
// masked (durations, speedups such as 1.02x and their intervals with what they read, percentages
// of a bound or of peak, the call counts of timing loops, GPU indices and UUIDs, which another
// lease may change) and the judge's cache note removed. The judge's timing-check lines (noise
// flags) are left out altogether.
struct compared_line {
  int number;  ///< in the observation, from 1
  std::string shown, compared;
};

std::vector<compared_line> comparable_lines(const std::string& s) {
  static const std::regex figures[] = {
      std::regex(R"(\(\d+(\.\d+)?% interval [^)]*\))"),
      std::regex(R"(\d+(\.\d+)?(e[-+]?\d+)?\s*(ns|us|µs|ms|s|sec|secs|seconds|min)\b)"),
      std::regex(R"(\b\d+(\.\d+)?x\b)"),
      std::regex(R"(\d+(\.\d+)?\s*%)"),
      std::regex(R"(\b\d+ calls\b)"),
      std::regex(R"(\bGPU-[0-9a-fA-F-]{8,})"),
      std::regex(R"(\bGPUs? \d+(\s*,\s*\d+)*)"),
  };
  static const std::regex cached(R"( \(reference outputs from the cache\))");
  std::vector<compared_line> out;
  std::istringstream in(s);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.starts_with("timing check: ")) continue;
    std::string masked = std::regex_replace(line, cached, "");
    for (const std::regex& f : figures) masked = std::regex_replace(masked, f, "<measured>");
    out.push_back({number, line, std::move(masked)});
  }
  return out;
}

// The first line whose compared form differs, as shown then and now; empty when none does.
std::string first_difference(const std::string& a, const std::string& b) {
  const auto x = comparable_lines(a), y = comparable_lines(b);
  for (std::size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    const bool ha = i < x.size(), hb = i < y.size();
    if (ha && hb && x[i].compared == y[i].compared) continue;
    return fmt::format("line {}: then '{}', now '{}'", ha ? x[i].number : y[i].number, ha ? one_line(x[i].shown) : "<end>",
                       hb ? one_line(y[i].shown) : "<end>");
  }
  return "";
}

}  // namespace

std::string render_transcript(const transcript_file& t, const std::string& format) {
  return format == "md" ? render_md(t) : render_text(t);
}

constexpr std::array<pk::config::enum_name<step_match::verdict>, 4> step_verdict_names = {{
    {step_match::verdict::identical, "identical"},
    {step_match::verdict::measured_only, "differs only in measured figures (times, speedups, percentages, GPU ids)"},
    {step_match::verdict::differs, "DIFFERS"},
    {step_match::verdict::missing, "not re-executed"},
}};

std::string_view to_string(step_match::verdict v) { return pk::config::enum_to_string(step_verdict_names, v); }

std::vector<step_match> compare_observations(const transcript_file& then, const transcript_file& now) {
  std::vector<step_match> out;
  for (const auto& [n, s] : then.steps) {
    if (s.observation.is_null()) continue;
    step_match m{n, step_match::missing, ""};
    auto it = now.steps.find(n);
    if (it != now.steps.end() && !it->second.observation.is_null()) {
      std::string a = s.observation.value("text", ""), b = it->second.observation.value("text", "");
      m.detail = a == b ? "" : first_difference(a, b);
      m.result = a == b ? step_match::identical : m.detail.empty() ? step_match::measured_only : step_match::differs;
    }
    out.push_back(m);
  }
  return out;
}

}  // namespace pk::agent
