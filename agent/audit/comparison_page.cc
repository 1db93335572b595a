#include "agent/audit/comparison_page.h"

#include <algorithm>

#include <fmt/format.h>

#include "agent/audit/html_text.h"

namespace pk::audit {

namespace {

std::string column(const compared_episode& c, int step) {
  const auto& steps = c.data->transcript.steps;
  auto it = steps.find(step);
  if (it == steps.end()) return "<div><p class=\"meta\">no such step</p></div>";
  return fmt::format("<div><a href=\"{}#step-{}\">{} · step {}</a>\n{}</div>", escape(c.href), step, escape(c.label), step,
                     step_body(it->second, c.data->prices_known()));
}

std::string head(const compared_episode& c) {
  return fmt::format("<div><h3><a href=\"{}\">{}</a></h3><p>{} steps · {}</p><p><b>{}</b></p></div>", escape(c.href),
                     escape(c.label), c.data->transcript.complete_steps(), escape(c.data->ending()),
                     escape(verdict_summary(*c.data)));
}

}  // namespace

std::string render_comparison_page(const compared_episode& a, const compared_episode& b, const page_links& links) {
  const std::string title = fmt::format("{} vs {}", a.label, b.label);
  std::string s = nav_html(links);
  s += fmt::format("<h1>{}</h1>\n<div class=\"side\">{}{}</div>\n", escape(title), head(a), head(b));
  int last = 0;
  for (const auto* c : {&a, &b})
    if (!c->data->transcript.steps.empty()) last = std::max(last, c->data->transcript.steps.rbegin()->first);
  for (int n = 1; n <= last; ++n)
    s += fmt::format("<section class=\"step\" id=\"step-{0}\"><h3><a href=\"#step-{0}\">Step {0}</a></h3>\n"
                     "<div class=\"side\">{1}{2}</div></section>\n",
                     n, column(a, n), column(b, n));
  return page(title, s);
}

}  // namespace pk::audit
