// The arithmetic of problem.toml (roofline bounds, mesh axis sizes): numbers, + - * / ^ and
// parentheses, min(a, b, ...), max(a, b, ...), log2(x), and named variables (the [shape] keys, W, E).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace pk::bench {

/// Named values a formula may use.
using formula_vars = std::vector<std::pair<std::string, double>>;

/// Evaluates `expr` with muParser, allowing only the functions above and the names in `vars`.
/// Throws std::invalid_argument saying what is wrong (an unknown name, a syntax error).
double evaluate_formula(const std::string& expr, const formula_vars& vars);

}  // namespace pk::bench
