#include "bench/suite/compare_rule.h"

#include <array>

#include <fmt/format.h>

#include "config/enum_names.h"

namespace pk::bench {

namespace {

constexpr std::array<config::enum_name<compare_mode>, 6> mode_names = {{
    {compare_mode::allclose, "allclose"},
    {compare_mode::exact, "exact"},
    {compare_mode::norm, "norm"},
    {compare_mode::ulp, "ulp"},
    {compare_mode::rank, "rank"},
    {compare_mode::index, "index"},
}};

std::string fraction_note(double f) {
  return f > 0 ? fmt::format(", up to {:g}% of elements may differ", 100 * f) : "";
}

}  // namespace

std::string_view to_string(compare_mode m) { return config::enum_to_string(mode_names, m); }

std::optional<compare_mode> parse_compare_mode(std::string_view name) {
  return config::enum_from_string(mode_names, name);
}

std::string compare_rule::describe() const {
  const std::string order = descending ? "descending" : "ascending";
  switch (mode) {
    case compare_mode::allclose:
      return fmt::format("allclose (atol {:g}, rtol {:g}{})", atol, rtol, fraction_note(max_mismatch_fraction));
    case compare_mode::exact: return fmt::format("exact{}", fraction_note(max_mismatch_fraction));
    case compare_mode::norm:
      return fmt::format("norm (||got - want|| <= {:g} * ||want||)", max_rel_norm);
    case compare_mode::ulp:
      return fmt::format("ulp (at most {} representable values apart{})", max_ulp,
                         fraction_note(max_mismatch_fraction));
    case compare_mode::rank:
      return fmt::format("rank (any rank within its tie group of equal keys, {} order)", order);
    case compare_mode::index:
      return fmt::format("index (any order within groups of equal keys, {} order)", order);
  }
  return "?";
}

compare_rule compare_rule::allclose(double atol, double rtol) {
  compare_rule r;
  r.atol = atol;
  r.rtol = rtol;
  return r;
}

compare_rule compare_rule::of(compare_mode mode) {
  compare_rule r;
  r.mode = mode;
  return r;
}

compare_spec compare_spec::uniform(const compare_rule& rule) {
  compare_spec s;
  s.fallback = rule;
  return s;
}

const compare_rule& compare_spec::rule_for(std::string_view path) const {
  const compare_rule* best = &fallback;
  std::size_t best_len = 0;
  for (const auto& [declared, rule] : rules) {
    const bool covers = path == declared || (path.size() > declared.size() && path.starts_with(declared) &&
                                             path[declared.size()] == '[');
    if (covers && declared.size() >= best_len) best = &rule, best_len = declared.size();
  }
  return *best;
}

compare_rule read_compare_rule(config::table_reader& r, const compare_rule& fallback) {
  compare_rule rule = fallback;
  rule.mode = compare_mode::allclose;
  if (auto name = r.string("mode")) {
    auto m = parse_compare_mode(*name);
    if (!m)
      throw r.error("mode", fmt::format("unknown comparison mode '{}' (use allclose, exact, norm, ulp, rank or "
                                        "index; docs/problem_format.md says when to use which)",
                                        *name));
    rule.mode = *m;
  }
  const compare_mode m = rule.mode;
  // Each key belongs to some modes; a key given for another mode is a mistake worth naming.
  auto only_for = [&](std::string_view key, std::initializer_list<compare_mode> modes) {
    for (compare_mode ok : modes)
      if (ok == m) return true;
    for (const std::string& k : r.remaining_keys())
      if (k == key)
        throw r.error(key, fmt::format("does not apply to mode '{}' (see docs/problem_format.md)", to_string(m)));
    return false;
  };
  if (only_for("atol", {compare_mode::allclose})) rule.atol = r.non_negative_number("atol").value_or(rule.atol);
  if (only_for("rtol", {compare_mode::allclose})) rule.rtol = r.non_negative_number("rtol").value_or(rule.rtol);
  if (only_for("max_rel_norm", {compare_mode::norm})) {
    auto v = r.non_negative_number("max_rel_norm");
    if (!v) throw r.error("max_rel_norm", "missing: mode 'norm' needs the largest allowed ||got - want|| / ||want||");
    rule.max_rel_norm = *v;
  }
  if (only_for("max_ulp", {compare_mode::ulp})) {
    auto v = r.non_negative("max_ulp");
    if (!v) throw r.error("max_ulp", "missing: mode 'ulp' needs the largest allowed distance in representable values");
    rule.max_ulp = *v;
  }
  if (only_for("max_mismatch_fraction", {compare_mode::allclose, compare_mode::exact, compare_mode::ulp})) {
    rule.max_mismatch_fraction = r.non_negative_number("max_mismatch_fraction").value_or(0.0);
    if (rule.max_mismatch_fraction >= 1)
      throw r.error("max_mismatch_fraction", fmt::format("{} lets every element fail: use a fraction below 1",
                                                         rule.max_mismatch_fraction));
  }
  if (only_for("keys", {compare_mode::rank, compare_mode::index})) {
    auto v = r.string("keys");
    if (!v || v->empty())
      throw r.error("keys", fmt::format("missing: mode '{}' needs the name of the function in inputs.py that gives "
                                        "the keys (docs/problem_format.md, \"Tie-aware integers\")",
                                        to_string(m)));
    rule.keys = *v;
  }
  if (only_for("descending", {compare_mode::rank, compare_mode::index}))
    rule.descending = r.boolean("descending").value_or(true);
  return rule;
}

}  // namespace pk::bench
