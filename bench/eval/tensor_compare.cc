#include "bench/eval/tensor_compare.h"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace pk::bench {

namespace {

using json = nlohmann::json;

std::string kind_of(const json& node) {
  if (!node.is_object() || node.size() != 1) return "?";
  return node.begin().key();
}

std::string describe(const json& node) {
  const std::string k = kind_of(node);
  if (k == "tensor") return "a tensor";
  if (k == "digest") return "a tensor recorded by its digest";
  if (k == "sparse_coo") return "a sparse COO tensor";
  if (k == "tuple" || k == "list") return fmt::format("a {} of {}", k, node.begin()->size());
  if (k == "dict") return fmt::format("a dict of {} keys", node.begin()->size());
  if (k == "size") return fmt::format("torch.Size({})", node.begin()->dump());
  if (k == "group") return fmt::format("the process group of ranks {}", node.begin()->dump());
  if (k == "value") return node["value"].is_null() ? "None" : fmt::format("the value {}", node["value"].dump());
  if (k == "float") return fmt::format("the value {}", node["float"].get<std::string>());
  if (k == "repr") return node["repr"].get<std::string>();
  return "an unrecognised record";
}

std::string index_string(std::uint64_t flat, const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    const auto n = static_cast<std::uint64_t>(shape[d]);
    idx[d] = static_cast<std::int64_t>(flat % n);
    flat /= n;
  }
  return fmt::format("[{}]", fmt::join(idx, ", "));
}

std::string shape_string(const std::vector<std::int64_t>& shape) { return fmt::format("({})", fmt::join(shape, ", ")); }

std::string number(double v) { return fmt::format("{:.6g}", v); }

void note_first(leaf_comparison& leaf, std::uint64_t i, const tensor_view& want, std::string got_s, std::string want_s) {
  if (leaf.mismatches == 0) {
    leaf.first_index = index_string(i, want.shape);
    leaf.first_got = std::move(got_s);
    leaf.first_want = std::move(want_s);
  }
}

std::string where_first(const leaf_comparison& leaf, const char* other) {
  return fmt::format("first at {}: got {}, {} {}", leaf.first_index, leaf.first_got, other, leaf.first_want);
}

// NaN must meet NaN and Inf the same Inf; returns true when `want` is finite (the rule decides then).
// Otherwise sets `bad`.
bool finite_or_match(double got, double want, bool& bad) {
  if (std::isfinite(want)) return true;
  bad = std::isnan(want) ? !std::isnan(got) : got != want;
  return false;
}

// allclose, exact and ulp: a verdict per element, then at most max_mismatch_fraction of them may fail
// (NaN or Inf where the reference is finite never may).
void compare_elementwise(const tensor_view& a, const tensor_view& b, const compare_rule& rule, leaf_comparison& leaf,
                         const char* other) {
  const std::uint64_t n = b.numel();
  const char kind = dtype_kind(b.dtype);
  if (rule.mode == compare_mode::ulp && kind == 'c') {
    leaf.ok = false;
    leaf.message = "mode ulp does not apply to complex tensors (the problem's declaration is wrong)";
    return;
  }
  const std::optional<element_reader> ga = kind == 'c' ? std::nullopt : std::optional<element_reader>(a),
                                      wb = kind == 'c' ? std::nullopt : std::optional<element_reader>(b);
  for (std::uint64_t i = 0; i < n; ++i) {
    bool bad = false, nonfinite = false;
    double diff = 0, mag = 0;
    std::string got_s, want_s;
    if (kind == 'c') {
      auto [gr, gi] = element_complex(a, i);
      auto [wr, wi] = element_complex(b, i);
      const bool want_finite = std::isfinite(wr) && std::isfinite(wi);
      diff = std::hypot(gr - wr, gi - wi);
      mag = std::hypot(wr, wi);
      nonfinite = want_finite && !(std::isfinite(gr) && std::isfinite(gi));
      if (!want_finite) bad = !(std::isnan(gr) == std::isnan(wr) && std::isnan(gi) == std::isnan(wi));
      else if (rule.mode == compare_mode::exact) bad = gr != wr || gi != wi;
      else bad = nonfinite || !(diff <= rule.atol + rule.rtol * mag);
      if (bad) got_s = fmt::format("{}{:+.6g}j", number(gr), gi), want_s = fmt::format("{}{:+.6g}j", number(wr), wi);
    } else {
      const double got = (*ga)(i), want = (*wb)(i);
      diff = std::fabs(got - want);
      mag = std::fabs(want);
      if (finite_or_match(got, want, bad)) {
        nonfinite = !std::isfinite(got);
        if (nonfinite) {
          bad = true;
        } else if (rule.mode == compare_mode::ulp) {
          const std::int64_t d = std::llabs(ordered_code(a, i) - ordered_code(b, i));
          leaf.max_ulp = std::max(leaf.max_ulp, d);
          bad = d > rule.max_ulp;
        } else if (rule.mode == compare_mode::exact || kind == 'i') {
          bad = got != want;
        } else {
          bad = !(diff <= rule.atol + rule.rtol * mag);
        }
      }
      if (bad) got_s = number(got), want_s = number(want);
    }
    if (std::isfinite(diff)) {
      leaf.max_abs_error = std::max(leaf.max_abs_error, diff);
      if (mag > 0) leaf.max_rel_error = std::max(leaf.max_rel_error, diff / mag);
    }
    if (bad) {
      note_first(leaf, i, b, got_s, want_s);
      ++leaf.mismatches;
      if (nonfinite) ++leaf.nonfinite;
    }
  }
  const auto allowed = static_cast<std::uint64_t>(std::floor(rule.max_mismatch_fraction * static_cast<double>(n)));
  if (leaf.nonfinite == 0 && leaf.mismatches <= allowed) return;
  leaf.ok = false;
  const std::string allowance =
      rule.max_mismatch_fraction > 0
          ? fmt::format(" (at most {} may, max_mismatch_fraction {:g})", allowed, rule.max_mismatch_fraction)
          : "";
  if (leaf.nonfinite)
    leaf.message = fmt::format("{} of {} elements are NaN or Inf where {} is finite, {}", leaf.nonfinite, n, other,
                               where_first(leaf, other));
  else if (rule.mode == compare_mode::ulp)
    leaf.message = fmt::format("{} of {} elements are more than {} ulp from {}{} (max {} ulp), {}", leaf.mismatches, n,
                               rule.max_ulp, other, allowance, leaf.max_ulp, where_first(leaf, other));
  else if (rule.mode == compare_mode::exact || kind == 'i' || (rule.atol == 0 && rule.rtol == 0))
    leaf.message = fmt::format("{} of {} elements differ from {}{}, {}", leaf.mismatches, n, other, allowance,
                               where_first(leaf, other));
  else
    leaf.message = fmt::format("{} of {} elements differ beyond atol={} rtol={}{} (max abs error {}, max rel error "
                               "{}), {}",
                               leaf.mismatches, n, rule.atol, rule.rtol, allowance, number(leaf.max_abs_error),
                               number(leaf.max_rel_error), where_first(leaf, other));
}

// ||got - want|| <= max_rel_norm * ||want|| over the whole leaf (2-norm, complex on the modulus).
void compare_norm(const tensor_view& a, const tensor_view& b, const compare_rule& rule, leaf_comparison& leaf,
                  const char* other) {
  const std::uint64_t n = b.numel();
  const bool complex = dtype_kind(b.dtype) == 'c';
  double diff_sq = 0, want_sq = 0;
  const std::optional<element_reader> ga = complex ? std::nullopt : std::optional<element_reader>(a),
                                      wb = complex ? std::nullopt : std::optional<element_reader>(b);
  for (std::uint64_t i = 0; i < n; ++i) {
    double gr, gi = 0, wr, wi = 0;
    if (complex) std::tie(gr, gi) = element_complex(a, i), std::tie(wr, wi) = element_complex(b, i);
    else gr = (*ga)(i), wr = (*wb)(i);
    bool bad = false;
    const bool want_finite = std::isfinite(wr) && std::isfinite(wi);
    if (!want_finite) {
      bad = !(std::isnan(gr) == std::isnan(wr) && std::isnan(gi) == std::isnan(wi)) ||
            (!std::isnan(wr) && gr != wr);
    } else if (!std::isfinite(gr) || !std::isfinite(gi)) {
      bad = true;
      ++leaf.nonfinite;
    } else {
      const double d = std::hypot(gr - wr, gi - wi);
      diff_sq += d * d;
      want_sq += wr * wr + wi * wi;
      leaf.max_abs_error = std::max(leaf.max_abs_error, d);
    }
    if (bad) {
      note_first(leaf, i, b, number(gr), number(wr));
      ++leaf.mismatches;
    }
  }
  const double diff_norm = std::sqrt(diff_sq), want_norm = std::sqrt(want_sq);
  leaf.max_rel_error = want_norm > 0 ? diff_norm / want_norm : (diff_norm > 0 ? INFINITY : 0.0);
  if (leaf.mismatches) {
    leaf.ok = false;
    leaf.message = fmt::format("{} of {} elements are NaN or Inf where {} is not (or the reverse), {}",
                               leaf.mismatches, n, other, where_first(leaf, other));
  } else if (!(diff_norm <= rule.max_rel_norm * want_norm)) {
    leaf.ok = false;
    leaf.message = fmt::format("||got - want|| / ||want|| = {} (||got - want|| = {}, ||want|| = {}) exceeds "
                               "max_rel_norm {:g}",
                               number(leaf.max_rel_error), number(diff_norm), number(want_norm), rule.max_rel_norm);
  }
}

// The keys a rank or index rule names, as rows of `row_len` keys: a tensor of the reference's judge data.
const tensor_view* judge_keys(const json* judge, const tensor_file& wf, const std::string& name, std::string& error) {
  if (judge && kind_of(*judge) == "dict")
    for (const json& pair : (*judge)["dict"])
      if (pair.at(0).contains("value") && pair[0]["value"] == name) {
        if (kind_of(pair.at(1)) != "tensor") break;
        return &wf.tensor(pair[1]["tensor"].get<std::string>());
      }
  error = fmt::format("the reference's record holds no keys '{}' for this tie-aware rule (the reference run "
                      "records them from inputs.py's {}())",
                      name, name);
  return nullptr;
}

// rank: element i is the 1-based position of keys[i, 0] among row i of the keys in the rule's order;
// with ties any position inside the tie group is right.
void compare_ranks(const tensor_view& a, const tensor_view& b, const tensor_view& keys, const compare_rule& rule,
                   leaf_comparison& leaf, const char* other) {
  const std::uint64_t rows = b.numel();
  if (rows == 0 || keys.numel() % rows != 0 || keys.numel() == 0) {
    leaf.ok = false;
    leaf.message = fmt::format("the keys '{}' have shape {}, not one row per element of the output {}", rule.keys,
                               shape_string(keys.shape), shape_string(b.shape));
    return;
  }
  const std::uint64_t width = keys.numel() / rows;
  const element_reader key(keys), ga(a), wb(b);
  for (std::uint64_t i = 0; i < rows; ++i) {
    const double item = key(i * width);
    std::uint64_t before = 0, tied = 0;
    for (std::uint64_t j = 0; j < width; ++j) {
      const double k = key(i * width + j);
      if (k == item) ++tied;
      else if (rule.descending ? k > item : k < item) ++before;
    }
    const double lo = static_cast<double>(before + 1), hi = static_cast<double>(before + tied);
    const double got = ga(i), want = wb(i);
    if (!(want >= lo && want <= hi)) {
      leaf.ok = false;
      leaf.message = fmt::format("the keys '{}' do not explain {}'s own value {} at {} (its tie group spans {}..{}): "
                                 "the problem's keys function is wrong",
                                 rule.keys, other, number(want), index_string(i, b.shape), lo, hi);
      return;
    }
    if (!(got >= lo && got <= hi)) {
      note_first(leaf, i, b, number(got), fmt::format("{} (any of {}..{} within its ties)", number(want), lo, hi));
      ++leaf.mismatches;
    }
    leaf.max_abs_error = std::max(leaf.max_abs_error, std::fabs(got - want));
  }
  if (leaf.mismatches) {
    leaf.ok = false;
    leaf.message = fmt::format("{} of {} ranks lie outside their tie groups, {}", leaf.mismatches, rows,
                               where_first(leaf, other));
  }
}

// index: row r of the output holds indices into row r of the keys; position j must select a key equal
// to the one the reference selected there, each index at most once per row.
void compare_indices(const tensor_view& a, const tensor_view& b, const tensor_view& keys, const compare_rule& rule,
                     leaf_comparison& leaf, const char* other) {
  if (b.shape.empty()) {
    leaf.ok = false;
    leaf.message = "mode index needs outputs with a last dimension of indices";
    return;
  }
  const std::uint64_t per_row = static_cast<std::uint64_t>(b.shape.back());
  const std::uint64_t rows = per_row ? b.numel() / per_row : 0;
  const std::uint64_t width = rows ? keys.numel() / rows : 0;
  if (rows == 0 || width == 0 || rows * width != keys.numel()) {
    leaf.ok = false;
    leaf.message = fmt::format("the keys '{}' have shape {}, not one row per row of the output {}", rule.keys,
                               shape_string(keys.shape), shape_string(b.shape));
    return;
  }
  const element_reader key(keys), ga(a), wb(b);
  for (std::uint64_t r = 0; r < rows; ++r) {
    std::set<std::int64_t> seen;
    for (std::uint64_t j = 0; j < per_row; ++j) {
      const std::uint64_t i = r * per_row + j;
      const double got = ga(i), want = wb(i);
      std::string why;
      if (!(got >= 0 && got < static_cast<double>(width))) why = "out of range";
      else if (!seen.insert(static_cast<std::int64_t>(got)).second) why = "repeated in its row";
      else if (want >= 0 && want < static_cast<double>(width)) {
        const double kg = key(r * width + static_cast<std::uint64_t>(got));
        const double kw = key(r * width + static_cast<std::uint64_t>(want));
        if (!(kg == kw || (std::isnan(kg) && std::isnan(kw))))
          why = fmt::format("selects key {} where {} selects key {}", number(kg), other, number(kw));
      }
      if (!why.empty()) {
        note_first(leaf, i, b, fmt::format("{} ({})", number(got), why), number(want));
        ++leaf.mismatches;
      }
    }
  }
  if (leaf.mismatches) {
    leaf.ok = false;
    leaf.message = fmt::format("{} of {} indices select other keys than {} (ties may be in any order), {}",
                               leaf.mismatches, b.numel(), other, where_first(leaf, other));
  }
  (void)rule;
}

void compare_tensors(const tensor_view& a, const tensor_view& b, const compare_rule& rule, leaf_comparison& leaf,
                     const tensor_view* keys = nullptr, const char* other = "the reference") {
  if (a.shape != b.shape) {
    leaf.ok = false;
    leaf.message = fmt::format("shape {} but {} has shape {}", shape_string(a.shape), other, shape_string(b.shape));
    return;
  }
  if (a.dtype != b.dtype) {
    leaf.ok = false;
    leaf.message = fmt::format("dtype {} but {} has dtype {}", torch_dtype_name(a.dtype), other,
                               torch_dtype_name(b.dtype));
    return;
  }
  leaf.elements = b.numel();
  switch (rule.mode) {
    case compare_mode::norm: return compare_norm(a, b, rule, leaf, other);
    case compare_mode::rank:
    case compare_mode::index:
      if (dtype_kind(b.dtype) != 'i') {
        leaf.ok = false;
        leaf.message = fmt::format("mode {} compares integer outputs, not {} (the problem's declaration is wrong)",
                                   to_string(rule.mode), torch_dtype_name(b.dtype));
        return;
      }
      return rule.mode == compare_mode::rank ? compare_ranks(a, b, *keys, rule, leaf, other)
                                             : compare_indices(a, b, *keys, rule, leaf, other);
    default: return compare_elementwise(a, b, rule, leaf, other);
  }
}

bool plain_equal(const json& a, const json& b, const compare_rule& rule) {
  if (a.is_number_float() || b.is_number_float()) {
    if (!a.is_number() || !b.is_number()) return false;
    const double x = a.get<double>(), y = b.get<double>();
    if (rule.mode == compare_mode::allclose) return std::fabs(x - y) <= rule.atol + rule.rtol * std::fabs(y);
    if (rule.mode == compare_mode::norm) return std::fabs(x - y) <= rule.max_rel_norm * std::fabs(y);
  }
  return a == b;
}

struct walker {
  const tensor_file& gf;
  const tensor_file& wf;
  const compare_spec& spec;
  const json* judge;  // the reference file's judge data, or null
  comparison& out;

  void fail(const std::string& path, std::string message) {
    leaf_comparison leaf;
    leaf.path = path;
    leaf.ok = false;
    leaf.message = std::move(message);
    out.leaves.push_back(std::move(leaf));
  }

  void tensor_leaf(const json& got, const json& want, const std::string& path) {
    leaf_comparison leaf;
    leaf.path = path;
    const compare_rule& rule = spec.rule_for(path);
    const tensor_view* keys = nullptr;
    if (rule.mode == compare_mode::rank || rule.mode == compare_mode::index) {
      std::string error;
      keys = judge_keys(judge, wf, rule.keys, error);
      if (!keys) return fail(path, error);
    }
    compare_tensors(gf.tensor(got["tensor"]), wf.tensor(want["tensor"]), rule, leaf, keys);
    out.leaves.push_back(std::move(leaf));
  }

  void walk(const json& got, const json& want, const std::string& path) {
    const std::string gk = kind_of(got), wk = kind_of(want);
    const bool seq_g = gk == "tuple" || gk == "list", seq_w = wk == "tuple" || wk == "list";
    if (gk != wk && !(seq_g && seq_w))
      return fail(path, fmt::format("{} but the reference returns {}", describe(got), describe(want)));
    if (wk == "tensor") {
      tensor_leaf(got, want, path);
    } else if (wk == "sparse_coo") {
      const json& g = got["sparse_coo"];
      const json& w = want["sparse_coo"];
      if (g.value("size", json()) != w.value("size", json()))
        return fail(path, fmt::format("a sparse tensor of size {} but the reference's has size {}",
                                      g.value("size", json()).dump(), w.value("size", json()).dump()));
      walk(g.value("indices", json()), w.value("indices", json()), path + ".indices");
      walk(g.value("values", json()), w.value("values", json()), path + ".values");
    } else if (seq_w) {
      const json& g = *got.begin();
      const json& w = *want.begin();
      if (g.size() != w.size())
        return fail(path, fmt::format("{} but the reference returns {}", describe(got), describe(want)));
      for (std::size_t i = 0; i < w.size(); ++i) walk(g[i], w[i], fmt::format("{}[{}]", path, i));
    } else if (wk == "dict") {
      const json& g = got["dict"];
      const json& w = want["dict"];
      for (const json& wpair : w) {
        const json* match = nullptr;
        for (const json& gpair : g)
          if (gpair.at(0) == wpair.at(0)) match = &gpair;
        const std::string key = wpair.at(0).contains("value") ? wpair[0]["value"].dump() : wpair[0].dump();
        if (!match) return fail(path, fmt::format("the dict lacks the reference's key {}", key));
        walk(match->at(1), wpair.at(1), fmt::format("{}[{}]", path, key));
      }
      if (g.size() != w.size()) fail(path, fmt::format("the dict has {} keys, the reference {}", g.size(), w.size()));
    } else {
      leaf_comparison leaf;
      leaf.path = path;
      const bool same = wk == "value" ? plain_equal(got["value"], want["value"], spec.rule_for(path)) : got == want;
      if (!same) {
        leaf.ok = false;
        leaf.message = fmt::format("{} but the reference returns {}", describe(got), describe(want));
      }
      out.leaves.push_back(std::move(leaf));
    }
  }
};

// The leaves the unchanged-inputs check covers, in the order the worker flags them: tensors and
// digests, depth first, dict keys before values, a sparse tensor's indices before its values.
void input_leaves(const json& node, const std::string& path, std::vector<std::pair<std::string, const json*>>& out) {
  const std::string k = kind_of(node);
  if (k == "tensor" || k == "digest") {
    out.emplace_back(path, &node);
  } else if (k == "sparse_coo") {
    input_leaves(node["sparse_coo"].value("indices", json()), path + ".indices", out);
    input_leaves(node["sparse_coo"].value("values", json()), path + ".values", out);
  } else if (k == "tuple" || k == "list") {
    const json& items = *node.begin();
    for (std::size_t i = 0; i < items.size(); ++i) input_leaves(items[i], fmt::format("{}[{}]", path, i), out);
  } else if (k == "dict") {
    for (const json& pair : node["dict"]) {
      input_leaves(pair.at(0), path + "<key>", out);
      input_leaves(pair.at(1), fmt::format("{}[{}]", path, pair.at(0).dump()), out);
    }
  }
}

void finish(comparison& c) {
  c.ok = true;
  for (const auto& leaf : c.leaves) c.ok = c.ok && leaf.ok;
}

}  // namespace

std::string comparison::first_failure() const {
  for (const auto& leaf : leaves)
    if (!leaf.ok) return fmt::format("{}: {}", leaf.path, leaf.message);
  return {};
}

comparison compare_outputs(const json& got, const tensor_file& gf, const json& want, const tensor_file& wf,
                           const compare_spec& spec) {
  comparison out;
  const json* judge = wf.has_tree("judge") ? &wf.tree("judge") : nullptr;
  walker{gf, wf, spec, judge, out}.walk(got, want, "output");
  finish(out);
  return out;
}

comparison compare_outputs(const json& got, const tensor_file& gf, const json& want, const tensor_file& wf,
                           tolerance tol) {
  return compare_outputs(got, gf, want, wf, compare_spec::uniform(compare_rule::allclose(tol.atol, tol.rtol)));
}

comparison compare_in_place(const json& got_inputs, const tensor_file& gf, const json& want_in_place,
                            const tensor_file& wf, const std::vector<int>& in_place, const compare_spec& spec) {
  comparison out;
  const json* judge = wf.has_tree("judge") ? &wf.tree("judge") : nullptr;
  walker w{gf, wf, spec, judge, out};
  const std::string gk = kind_of(got_inputs), wk = kind_of(want_in_place);
  const json* got_args = (gk == "tuple" || gk == "list") ? &*got_inputs.begin() : nullptr;
  const json* want_args = (wk == "tuple" || wk == "list") ? &*want_in_place.begin() : nullptr;
  for (std::size_t j = 0; j < in_place.size(); ++j) {
    const std::string path = fmt::format("input[{}]", in_place[j]);
    const auto pos = static_cast<std::size_t>(in_place[j]);
    if (!want_args || j >= want_args->size())
      w.fail(path, "the reference's record holds no value of this in-place argument after its call");
    else if (!got_args || pos >= got_args->size())
      w.fail(path, "missing from the recorded inputs");
    else
      w.walk((*got_args)[pos], (*want_args)[j], path);
  }
  finish(out);
  return out;
}

comparison compare_unchanged_inputs(const json& got, const tensor_file& gf, const json& want,
                                    const tensor_file& wf, const std::vector<bool>& mutated) {
  comparison out;
  std::vector<std::pair<std::string, const json*>> g, w;
  input_leaves(got, "input", g);
  input_leaves(want, "input", w);
  const char* changed = "the call modified this input, which the reference leaves unchanged";
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (i < mutated.size() && mutated[i]) continue;
    leaf_comparison leaf;
    leaf.path = w[i].first;
    if (i >= g.size()) {
      leaf.ok = false;
      leaf.message = "missing after the call";
    } else if (kind_of(*w[i].second) == "digest" || kind_of(*g[i].second) == "digest") {
      if (kind_of(*w[i].second) != kind_of(*g[i].second)) {
        leaf.ok = false;
        leaf.message = "recorded as a digest on one side and in full on the other";
      } else if (!(digest_of(*g[i].second) == digest_of(*w[i].second))) {
        leaf.ok = false;
        leaf.message = fmt::format("{}: its digest changed", changed);
      }
    } else {
      const tensor_view& a = gf.tensor((*g[i].second)["tensor"].get<std::string>());
      const tensor_view& b = wf.tensor((*w[i].second)["tensor"].get<std::string>());
      if (a.shape != b.shape || a.dtype != b.dtype || a.bytes != b.bytes) {
        // Exact comparison, reported like an output mismatch.
        compare_tensors(a, b, compare_rule::of(compare_mode::exact), leaf, nullptr, "the value before the call");
        if (leaf.ok) {  // only -0.0 vs 0.0 or NaN payloads differ
          leaf.ok = false;
          leaf.message = "its bytes changed";
        }
        leaf.message = fmt::format("{}: {}", changed, leaf.message);
      }
    }
    out.leaves.push_back(std::move(leaf));
  }
  finish(out);
  return out;
}

comparison judge_files(const tensor_file& got, const tensor_file& want, const compare_spec& spec,
                       const std::vector<int>& in_place, const std::vector<bool>& mutated) {
  comparison c = compare_outputs(got.tree("output"), got, want.tree("output"), want, spec);
  auto append = [&](comparison more) {
    for (auto& leaf : more.leaves) c.leaves.push_back(std::move(leaf));
  };
  if (!in_place.empty()) {
    const json none = {{"tuple", json::array()}};
    append(compare_in_place(got.tree("inputs"), got, want.has_tree("in_place") ? want.tree("in_place") : none, want,
                            in_place, spec));
  }
  append(compare_unchanged_inputs(got.tree("inputs"), got, want.tree("inputs"), want, mutated));
  finish(c);
  return c;
}

}  // namespace pk::bench
