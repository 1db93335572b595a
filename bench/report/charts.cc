#include "bench/report/charts.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

namespace pk::report {
namespace {

constexpr double width = 720, height = 380;
constexpr double left = 70, right = 20, top = 64, bottom = 52;
constexpr double plot_w = width - left - right, plot_h = height - top - bottom;

std::string escape_text(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

double position(const axis& a, double v) {
  if (a.max == a.min) return 0.5;
  if (a.log) return (std::log10(v) - std::log10(a.min)) / (std::log10(a.max) - std::log10(a.min));
  return (v - a.min) / (a.max - a.min);
}
double px(const axis& a, double v) { return left + plot_w * position(a, v); }
double py(const axis& a, double v) { return top + plot_h * (1 - position(a, v)); }

std::string tick_text(const axis& a, double v) {
  if (a.percent) return fmt::format("{:.0f}%", 100 * v);
  if (a.integer || v == std::round(v)) return fmt::format("{:.0f}", v);
  return fmt::format("{:g}", v);
}

std::vector<double> ticks(const axis& a) {
  std::vector<double> out;
  if (a.log && a.octaves) {
    for (double v = std::exp2(std::ceil(std::log2(a.min))); v <= a.max * 1.0001; v *= 2) out.push_back(v);
    return out;
  }
  if (a.log) {
    for (double decade = std::pow(10, std::floor(std::log10(a.min))); decade <= a.max * 1.0001; decade *= 10)
      for (double m : {1.0, 2.0, 5.0})
        if (double v = decade * m; v >= a.min * 0.9999 && v <= a.max * 1.0001) out.push_back(v);
    return out;
  }
  double span = a.max - a.min;
  double step = std::pow(10, std::floor(std::log10(span / 5)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (span / (step * m) <= 6) {
      step *= m;
      break;
    }
  if (a.integer) step = std::max(1.0, std::round(step));
  for (double v = std::ceil(a.min / step) * step; v <= a.max + 1e-9; v += step) out.push_back(v);
  return out;
}

std::string frame(const std::string& title, const axis& x, const axis& y) {
  std::string s = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
      R"(role="img" aria-label="{2}">)"
      "\n<rect width=\"{0}\" height=\"{1}\" fill=\"#fff\"/>\n"
      R"(<text x="{3}" y="22" font-size="16" font-weight="600">{2}</text>)"
      "\n",
      width, height, escape_text(title), left);
  for (double v : ticks(y)) {
    double yy = py(y, v);
    s += fmt::format(R"(<line x1="{}" x2="{}" y1="{:.1f}" y2="{:.1f}" stroke="#e3e3e3"/>)"
                     R"(<text x="{}" y="{:.1f}" font-size="12" text-anchor="end">{}</text>)"
                     "\n",
                     left, width - right, yy, yy, left - 8, yy + 4, tick_text(y, v));
  }
  for (double v : ticks(x)) {
    double xx = px(x, v);
    s += fmt::format(R"(<line x1="{:.1f}" x2="{:.1f}" y1="{}" y2="{}" stroke="#999"/>)"
                     R"(<text x="{:.1f}" y="{}" font-size="12" text-anchor="middle">{}</text>)"
                     "\n",
                     xx, xx, top + plot_h, top + plot_h + 5, xx, top + plot_h + 19, tick_text(x, v));
  }
  s += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#555"/>)"
                   "\n"
                   R"(<text x="{}" y="{}" font-size="13" text-anchor="middle">{}</text>)"
                   "\n"
                   R"~(<text x="16" y="{}" font-size="13" text-anchor="middle" transform="rotate(-90 16 {})">{}</text>)~"
                   "\n",
                   left, top, plot_w, plot_h, left + plot_w / 2, height - 10, escape_text(x.label), top + plot_h / 2,
                   top + plot_h / 2, escape_text(y.label));
  return s;
}

// Legend entries in rows under the title.
std::string legend(const std::vector<std::pair<std::string, std::pair<std::string, bool>>>& entries) {
  std::string s;
  double x = left, y = 42;
  for (const auto& [name, style] : entries) {
    double w = 34 + 7.0 * static_cast<double>(name.size());
    if (x + w > width - right) {
      x = left;
      y += 16;
    }
    s += fmt::format(R"(<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="{}" stroke-width="3"{}/>)"
                     R"(<text x="{}" y="{}" font-size="12">{}</text>)"
                     "\n",
                     x, x + 22, y - 4, y - 4, style.first, style.second ? R"( stroke-dasharray="6 4")" : "", x + 27,
                     y, escape_text(name));
    x += w;
  }
  return s;
}

}  // namespace

std::string escape_xml(const std::string& text) { return escape_text(text); }

const std::string& run_color(std::size_t index) {
  static const std::array<std::string, 6> palette = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"};
  return palette[index % palette.size()];
}

std::string line_chart(const std::string& title, const axis& x, const axis& y, const std::vector<series>& lines) {
  std::string s = frame(title, x, y);
  std::vector<std::pair<std::string, std::pair<std::string, bool>>> entries;
  for (const auto& line : lines) {
    std::string path;
    for (const auto& [vx, vy] : line.points)
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", px(x, vx), py(y, vy));
    if (!path.empty())
      // Translucent, so a run whose curve coincides with another's stays visible beneath it.
      s += fmt::format(R"(<path d="{}" fill="none" stroke="{}" stroke-width="2.5" stroke-opacity="0.75"{}/>)"
                       "\n",
                       path, line.color, line.dashed ? R"( stroke-dasharray="6 4")" : "");
    for (const auto& [vx, vy] : line.points)
      s += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="4" fill="{}"><title>{}: {} → {}</title></circle>)"
                       "\n",
                       px(x, vx), py(y, vy), line.color, escape_text(line.name), tick_text(x, vx), tick_text(y, vy));
    entries.push_back({line.name, {line.color, line.dashed}});
  }
  return s + legend(entries) + "</svg>\n";
}

std::string note_chart(const std::string& title, const std::vector<std::string>& lines) {
  constexpr double line_height = 22;
  const double h = top + line_height * static_cast<double>(lines.size()) + 24;
  std::string s = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" class="chart note" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
      R"(role="img" aria-label="{2}">)"
      "\n<rect width=\"{0}\" height=\"{1}\" fill=\"#fff\"/>\n"
      R"(<text x="{3}" y="22" font-size="16" font-weight="600">{2}</text>)"
      "\n",
      width, h, escape_text(title), left);
  for (std::size_t i = 0; i < lines.size(); ++i)
    s += fmt::format(R"(<text x="{}" y="{:.0f}" font-size="14"{}>{}</text>)"
                     "\n",
                     left, top + line_height * static_cast<double>(i), i == 0 ? R"( font-style="italic")" : "",
                     escape_text(lines[i]));
  return s + "</svg>\n";
}

std::string log_histogram(const std::string& title, const std::string& x_label,
                          const std::vector<histogram_group>& groups, double marker) {
  // Quarter-octave bins covering every value and the marker.
  double lo = std::log2(marker), hi = std::log2(marker);
  for (const auto& g : groups)
    for (double v : g.values) {
      lo = std::min(lo, std::log2(v));
      hi = std::max(hi, std::log2(v));
    }
  constexpr double bin = 0.25;
  int first = static_cast<int>(std::floor(lo / bin)) - 1, last = static_cast<int>(std::floor(hi / bin)) + 1;
  int bins = last - first + 1;
  std::vector<std::vector<int>> counts(groups.size(), std::vector<int>(static_cast<std::size_t>(bins), 0));
  int tallest = 1;
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (double v : groups[g].values) {
      auto b = static_cast<std::size_t>(static_cast<int>(std::floor(std::log2(v) / bin)) - first);
      tallest = std::max(tallest, ++counts[g][b]);
    }
  axis x{x_label, std::exp2(first * bin), std::exp2((last + 1) * bin), true, true, false, false};
  axis y{"correct solutions", 0, static_cast<double>(tallest), false, false, false, true};
  std::string s = frame(title, x, y);
  std::vector<std::pair<std::string, std::pair<std::string, bool>>> entries;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (int b = 0; b < bins; ++b) {
      int n = counts[g][static_cast<std::size_t>(b)];
      if (n == 0) continue;
      double x0 = px(x, std::exp2((first + b) * bin)), x1 = px(x, std::exp2((first + b + 1) * bin));
      double w = (x1 - x0 - 2) / static_cast<double>(groups.size());
      double bx = x0 + 1 + w * static_cast<double>(g);
      s += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}">)"
                       R"(<title>{}: {} in [{:.2f}x, {:.2f}x)</title></rect>)"
                       "\n",
                       bx, py(y, n), w, top + plot_h - py(y, n), groups[g].color, escape_text(groups[g].name), n,
                       std::exp2((first + b) * bin), std::exp2((first + b + 1) * bin));
    }
    entries.push_back({fmt::format("{} ({})", groups[g].name, groups[g].values.size()), {groups[g].color, false}});
  }
  double mx = px(x, marker);
  s += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}" stroke="#333" stroke-dasharray="4 3"/>)"
                   R"(<text x="{3:.1f}" y="{4}" font-size="12">{5}</text>)"
                   "\n",
                   mx, top - 6, top + plot_h, mx + 4, top - 8, fmt::format("{:g}x", marker));
  return s + legend(entries) + "</svg>\n";
}

}  // namespace pk::report
