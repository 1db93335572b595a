// Small self-contained SVG charts (no scripts, no external assets) for the HTML report.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace pk::report {

struct series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in order
  std::string color;                              // CSS colour
  bool dashed = false;
};

struct axis {
  std::string label;
  double min = 0;
  double max = 1;
  bool log = false;      // log scale (needs min > 0), ticks at 1, 2, 5 x 10^i
  bool octaves = false;  // on a log scale: ticks at powers of two instead
  bool percent = false;  // ticks as percentages of 1
  bool integer = false;  // ticks on whole numbers only
};

/// Lines with a marker at every point; one legend entry per series.
std::string line_chart(const std::string& title, const axis& x, const axis& y, const std::vector<series>& lines);

struct histogram_group {
  std::string name;
  std::string color;
  std::vector<double> values;
};

/// Counts of `values` per group in bins of equal width on a log2 scale, bars side by side, with a
/// dashed marker at x = `marker` (e.g. speedup 1).
std::string log_histogram(const std::string& title, const std::string& x_label,
                          const std::vector<histogram_group>& groups, double marker);

/// A chart frame holding sentences instead of a plot, for data that cannot be drawn as one (one
/// sample per problem, nothing correct yet): the reader sees why, not an empty frame.
std::string note_chart(const std::string& title, const std::vector<std::string>& lines);

/// Text made safe for HTML/SVG content and attribute values (& < > ").
std::string escape_xml(const std::string& text);

/// The palette charts use, by run index.
const std::string& run_color(std::size_t index);

}  // namespace pk::report
