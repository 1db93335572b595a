#include "agent/audit/episode_page.h"

#include <fmt/format.h>

#include "agent/audit/html_text.h"
#include "agent/audit/solution_diff.h"

namespace pk::audit {
namespace {
using nlohmann::json;

// j[key], or an empty object where j is no object, lacks it or holds null there (the judge writes
// null for what it did not time), so that lookups go on without a check at every level.
json field(const json& j, const char* key) {
  json v = j.is_object() ? j.value(key, json()) : json();
  return v.is_null() ? json::object() : v;
}

std::string number_or_dash(const json& j, const char* fmt_spec) {
  return j.is_number() ? fmt::format(fmt::runtime(fmt_spec), j.get<double>()) : std::string("—");
}

std::string row(const std::string& name, const std::string& value_html) {
  return fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", escape(name), value_html);
}

// The judge's report of one check/bench/submit: its verdict and message, then one row per trial.
std::string report_table(const json& r) {
  if (!r.is_object()) return {};
  std::string s = fmt::format("<p>judge: <b>{}</b>{}</p>\n", escape(r.value("verdict", "?")),
                              r.value("message", "").empty() ? "" : " — " + escape(r.value("message", "")));
  s += "<table><thead><tr><th>trial</th><th>correct</th><th>max abs error</th><th>max rel error</th>"
       "<th>reference ms (median)</th><th>solution ms (median)</th><th>speedup</th><th>timing flags</th></tr></thead>"
       "<tbody>\n";
  for (const json& t : r.value("trials", json::array())) {
    double abs_err = 0, rel_err = 0;
    for (const json& k : t.value("ranks", json::array())) {
      abs_err = std::max(abs_err, k.value("max_abs_error", 0.0));
      rel_err = std::max(rel_err, k.value("max_rel_error", 0.0));
    }
    std::string flags;
    for (const json& f : t.value("timing_flags", json::array())) flags += (flags.empty() ? "" : "; ") + f.get<std::string>();
    s += fmt::format(
        "<tr><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{:.3g}</td><td class=\"num\">{:.3g}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
        t.value("trial", 0), t.value("correct", false) ? "yes" : "<span class=\"bad\">no</span>", abs_err, rel_err,
        number_or_dash(field(field(t, "reference"), "median_ms"), "{:.4f}"),
        number_or_dash(field(field(t, "candidate"), "median_ms"), "{:.4f}"),
        number_or_dash(t.value("speedup", json()), "{:.2f}x"), escape(flags));
  }
  s += "</tbody></table>\n";
  if (!r.value("log", "").empty()) s += output_block(r.value("log", ""), "failing rank's log");
  return s;
}

std::string calls_html(const episode_data& e, int step, const std::string*& previous_solution) {
  std::string s;
  for (const auto& c : e.calls) {
    if (c.step != step) continue;
    s += fmt::format("<div class=\"pkb\"><span class=\"label\">pkb {}{}</span>\n", escape(c.command),
                     c.exit ? fmt::format(", exit {}", *c.exit) : fmt::format(", refused ({})", escape(c.refused)));
    s += report_table(c.report);
    if (c.solution) {
      if (previous_solution) {
        s += "<span class=\"label\">solution.py since the previous check</span>\n";
        s += diff_html(line_diff(*previous_solution, *c.solution));
      } else {
        s += output_block(*c.solution, "solution.py as first checked");
      }
      previous_solution = &*c.solution;
    }
    if (!c.output.empty()) s += output_block(c.output, "profile");
    s += "</div>\n";
  }
  return s;
}

std::string stream_html(const json& stream, const std::string& name) {
  if (!stream.is_object()) return {};
  const std::string text = stream.value("text", "");
  const auto bytes = stream.value("bytes", std::uint64_t{0});
  if (text.empty() && bytes == 0) return {};
  std::string label = name;
  if (bytes > text.size()) label += fmt::format(" (the sandbox kept {} of the {} bytes written)", text.size(), bytes);
  return output_block(text, label);
}

}  // namespace

std::string nav_html(const page_links& links) {
  if (links.nav.empty()) return {};
  std::string s = "<nav>";
  for (const auto& [href, text] : links.nav) s += fmt::format("<a href=\"{}\">{}</a>", escape(href), escape(text));
  return s + "</nav>\n";
}

std::string step_spend(const json& response, bool prices_known) {
  const json& u = response.value("usage", json::object());
  std::string s = fmt::format("{} in", u.value("input", 0));
  if (u.value("cached_input", 0) > 0) s += fmt::format(" ({} cached)", u.value("cached_input", 0));
  if (u.value("cache_write", 0) > 0) s += fmt::format(" ({} written to cache)", u.value("cache_write", 0));
  return s + fmt::format(" / {} out tokens, {}, {:.1f} s", u.value("output", 0),
                         dollars_text(response.value("cost_usd", 0.0), prices_known),
                         response.value("latency_ms", 0) / 1000.0);
}

std::string step_body(const agent::recorded_step& st, bool prices_known) {
  std::string s;
  if (st.response.is_object()) {
    const json& r = st.response.value("response", json::object());
    s += fmt::format("<p class=\"meta\">{}{}{}</p>\n", escape(step_spend(r, prices_known)),
                     st.response.value("replayed", false) ? " · replayed" : "",
                     r.value("finish", "") == "length" ? " · <span class=\"bad\">cut at the output token limit</span>" : "");
    if (!r.value("text", "").empty()) s += output_block(r.value("text", ""), "model");
    const json& a = st.response.value("action", json());
    const std::string kind = a.is_object() ? a.value("kind", "") : "";
    if (kind == "bash") {
      s += output_block(a.value("command", ""), "command");
    } else if (kind == "submit") {
      s += "<p><b>submit</b></p>\n";
    } else if (kind == "invalid") {
      for (const json& c : r.value("tool_calls", json::array()))
        s += output_block(c.value("name", "?") + " " + c.value("arguments_text", ""), "tool call");
      s += output_block(a.value("problem", json()).dump(2), "format error");
    }
  }
  const json& o = st.observation;
  if (o.is_object()) {
    if (o.contains("exit_code")) {
      std::string status = fmt::format("exit {}", o.value("exit_code", -1));
      if (o.value("signal", 0) != 0) status += fmt::format(", signal {}", o.value("signal", 0));
      if (o.value("timed_out", false)) status += ", <span class=\"bad\">timed out</span>";
      if (o.value("oom_killed", false)) status += ", <span class=\"bad\">killed: out of memory</span>";
      s += fmt::format("<p class=\"meta\">{}, {:.2f} s wall, {:.2f} s CPU</p>\n", status, o.value("wall_seconds", 0.0),
                       o.value("cpu_seconds", 0.0));
      s += stream_html(o.value("stdout", json()), "stdout");
      s += stream_html(o.value("stderr", json()), "stderr");
      if (!o.value("note", "").empty()) s += output_block(o.value("note", ""), "note");
    } else if (o.contains("text")) {
      s += output_block(o.value("text", ""), "sent to the model");
    }
  }
  return s;
}

std::string verdict_summary(const episode_data& e) {
  const json& r = e.result;
  if (r.is_object() && r.contains("verdict")) {
    std::string s = r.value("verdict", "?");
    if (!r.value("forbidden_reason", json()).is_null()) s += " (" + r["forbidden_reason"].get<std::string>() + ")";
    s += " (final scoring on hidden inputs)";
    if (r.value("speedup", json()).is_number()) {
      const double sp = r["speedup"].get<double>();
      const double noise = r.value("noise", json()).is_number() ? r["noise"].get<double>() : 0.0;
      s += fmt::format(", speedup {:.2f}x, timing noise ±{:.1f}% [{:.2f}, {:.2f}]", sp, noise * 100, sp / (1 + noise),
                       sp * (1 + noise));
    }
    const json& t = r.value("timing", json());
    if (t.is_object())
      s += fmt::format(", reference {:.4f} ms, solution {:.4f} ms over {} trials", t.value("reference_ms", 0.0),
                       t.value("solution_ms", 0.0), t.value("trials", 0));
    if (t.is_object() && r.value("roofline_ms", json()).is_number() && t.value("solution_ms", 0.0) > 0)
      s += fmt::format(", {:.1f}% of the roofline bound ({:.4f} ms)",
                       100 * r["roofline_ms"].get<double>() / t.value("solution_ms", 1.0), r["roofline_ms"].get<double>());
    return s;
  }
  for (const json& ev : e.transcript.events)
    if (ev.value("type", "") == "evaluation")
      return fmt::format("{} (the task's check, score {})", ev.value("passed", false) ? "passed" : "failed",
                         ev.value("score", json()).dump());
  return "no verdict (nothing scored it)";
}

std::string render_episode_page(const episode_data& e, const page_links& links) {
  const json& h = e.transcript.header;
  const bool priced = e.prices_known();
  const std::string task = h.is_object() ? field(h, "task").value("id", "?") : "?";
  const std::string model = h.is_object() ? field(h, "model").value("name", "?") : "?";
  const std::string title = fmt::format("Episode {} · {}", task, model);
  std::string b = nav_html(links) + fmt::format("<h1>{}</h1>\n", escape(title));

  const json& o = e.transcript.outcome;
  const json& totals = o.is_object() ? o.value("totals", json::object()) : json::object();
  double dollars = 0;
  long long in = 0, out = 0, cached = 0;
  for (const auto& [n, st] : e.transcript.steps) {
    const json& r = st.response.is_object() ? st.response.value("response", json::object()) : json::object();
    dollars += r.value("cost_usd", 0.0);
    in += r.value("usage", json::object()).value("input", 0LL);
    out += r.value("usage", json::object()).value("output", 0LL);
    cached += r.value("usage", json::object()).value("cached_input", 0LL);
  }
  const bool ended = e.transcript.finished();
  b += "<table class=\"summary\">\n";
  if (h.is_object()) {
    b += row("mode", escape(h.value("mode", "agent")));
    b += row("started", escape(h.value("started_at", "?")) + " · pkagent " +
                            escape(field(h, "pkagent").value("version", "?")) + " (" + escape(field(h, "pkagent").value("commit", "?")) + ")");
  }
  b += row("ended", ended ? "<b>" + escape(e.ending()) + "</b>" : "<span class=\"bad\">" + escape(e.ending()) + "</span>");
  b += row("verdict", "<b>" + escape(verdict_summary(e)) + "</b>");
  b += row("steps", std::to_string(e.transcript.complete_steps()));
  b += row("tokens", fmt::format("{} in ({} cached) / {} out", in, cached, out));
  b += row("dollars", escape(dollars_text(ended ? totals.value("dollars", dollars) : dollars, priced)));
  if (ended) b += row("wall time", fmt::format("{:.1f} s", totals.value("wall_seconds", 0.0)));
  b += row("transcript", escape(e.transcript.path.string()));
  b += "</table>\n";

  if (h.is_object()) {
    b += "<h2 id=\"task\">Task</h2>\n" + output_block(field(h, "task").value("text", ""), "task prompt");
    for (const json& ev : e.transcript.events)
      if (ev.value("type", "") == "request" && ev.value("base_step", json()).is_null())
        for (const json& m : ev.value("new_messages", json::array()))
          if (m.value("role", "") == "system")
            b += fmt::format("<details class=\"out\"><summary>system prompt</summary><pre>{}</pre></details>\n",
                             escape(m.value("text", "")));
  }

  b += "<h2 id=\"steps\">Steps</h2>\n";
  const std::string* previous_solution = nullptr;
  for (const auto& [n, st] : e.transcript.steps) {
    b += fmt::format("<section class=\"step\" id=\"step-{0}\"><h3><a href=\"#step-{0}\">Step {0}</a></h3>\n", n);
    b += step_body(st, priced);
    b += calls_html(e, n, previous_solution);
    b += "</section>\n";
  }
  const std::string unplaced = calls_html(e, 0, previous_solution);
  if (!unplaced.empty()) b += "<h2>pkb calls not placed at a step</h2>\n" + unplaced;

  b += "<h2 id=\"outcome\">Outcome</h2>\n";
  b += fmt::format("<p class=\"{}\">{}</p>\n<p><b>Verdict</b>: {}</p>\n", ended ? "" : "bad", escape(e.ending()),
                   escape(verdict_summary(e)));
  if (!e.transcript.problems.empty() || !e.problems.empty()) {
    b += "<h2>Problems reading the episode</h2>\n<ul>\n";
    for (const auto& p : e.transcript.problems) b += fmt::format("<li>line {}: {}</li>\n", p.line, escape(p.reason));
    for (const auto& p : e.problems) b += "<li>" + escape(p) + "</li>\n";
    b += "</ul>\n";
  }
  return page(title, b);
}

}  // namespace pk::audit
