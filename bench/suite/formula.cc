#include "bench/suite/formula.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <stdexcept>

#include <fmt/format.h>
#include <muParser.h>

namespace pk::bench {

namespace {

constexpr const char* allowed_functions[] = {"min", "max", "log2"};

// muParser knows many more functions (sin, rint, ...); problem files may use only the documented
// ones, so that every tool reading them (the Python tests too) agrees on what a formula means.
void check_names(const std::string& expr, const formula_vars& vars) {
  for (std::size_t i = 0; i < expr.size();) {
    const unsigned char c = static_cast<unsigned char>(expr[i]);
    if (std::isdigit(c) || c == '.') {  // a number, exponent included ("1e-3")
      while (i < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[i])) || expr[i] == '.' ||
                                 ((expr[i] == '-' || expr[i] == '+') && (expr[i - 1] == 'e' || expr[i - 1] == 'E'))))
        ++i;
      continue;
    }
    if (!std::isalpha(c) && c != '_') {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[j])) || expr[j] == '_')) ++j;
    const std::string name = expr.substr(i, j - i);
    const bool known_var = std::any_of(vars.begin(), vars.end(), [&](const auto& v) { return v.first == name; });
    const bool known_fn = std::find(std::begin(allowed_functions), std::end(allowed_functions), name) !=
                          std::end(allowed_functions);
    if (!known_var && !known_fn) {
      std::string names;
      for (const auto& v : vars) names += fmt::format("{}{}", names.empty() ? "" : ", ", v.first);
      throw std::invalid_argument(fmt::format("unknown name '{}' (use {}, and the functions min, max, log2)", name,
                                              names.empty() ? "numbers" : names));
    }
    i = j;
  }
}

}  // namespace

double evaluate_formula(const std::string& expr, const formula_vars& vars) {
  check_names(expr, vars);
  // muParser keeps pointers to the variables: a deque never moves its elements.
  std::deque<double> values;
  mu::Parser parser;
  for (const auto& [name, v] : vars) {
    values.push_back(v);
    parser.DefineVar(name, &values.back());
  }
  try {
    parser.SetExpr(expr);
    return parser.Eval();
  } catch (const mu::Parser::exception_type& e) {
    throw std::invalid_argument(e.GetMsg());
  }
}

}  // namespace pk::bench
