#include "bench/eval/compare.h"

#include <cmath>
#include <functional>

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
  if (k == "tuple" || k == "list") return fmt::format("a {} of {}", k, node.begin()->size());
  if (k == "dict") return fmt::format("a dict of {} keys", node.begin()->size());
  if (k == "size") return fmt::format("torch.Size({})", node.begin()->dump());
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

void compare_tensors(const tensor_view& a, const tensor_view& b, tolerance tol, leaf_comparison& leaf,
                     const char* other = "the reference") {
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
  const std::uint64_t n = b.numel();
  leaf.elements = n;
  const char kind = dtype_kind(b.dtype);
  for (std::uint64_t i = 0; i < n; ++i) {
    bool bad = false, nonfinite = false;
    double got_re, want_re, diff, mag;
    std::string got_s, want_s;
    if (kind == 'c') {
      auto [gr, gi] = element_complex(a, i);
      auto [wr, wi] = element_complex(b, i);
      const bool want_finite = std::isfinite(wr) && std::isfinite(wi);
      const bool got_finite = std::isfinite(gr) && std::isfinite(gi);
      diff = std::hypot(gr - wr, gi - wi);
      mag = std::hypot(wr, wi);
      nonfinite = want_finite && !got_finite;
      bad = nonfinite || (want_finite ? !(diff <= tol.atol + tol.rtol * mag)
                                      : !(std::isnan(gr) == std::isnan(wr) && std::isnan(gi) == std::isnan(wi)));
      got_re = gr;
      want_re = wr;
      if (bad) got_s = fmt::format("{}{:+.6g}j", number(gr), gi), want_s = fmt::format("{}{:+.6g}j", number(wr), wi);
    } else {
      got_re = element(a, i);
      want_re = element(b, i);
      diff = std::fabs(got_re - want_re);
      mag = std::fabs(want_re);
      if (kind == 'i') {
        bad = got_re != want_re;
      } else if (std::isfinite(want_re)) {
        nonfinite = !std::isfinite(got_re);
        bad = nonfinite || !(diff <= tol.atol + tol.rtol * mag);
      } else {  // NaN must meet NaN, Inf the same Inf
        bad = std::isnan(want_re) ? !std::isnan(got_re) : got_re != want_re;
      }
      if (bad) got_s = number(got_re), want_s = number(want_re);
    }
    if (std::isfinite(diff)) {
      leaf.max_abs_error = std::max(leaf.max_abs_error, diff);
      if (mag > 0) leaf.max_rel_error = std::max(leaf.max_rel_error, diff / mag);
    }
    if (bad) {
      if (leaf.mismatches == 0) {
        leaf.first_index = index_string(i, b.shape);
        leaf.first_got = got_s;
        leaf.first_want = want_s;
      }
      ++leaf.mismatches;
      if (nonfinite) ++leaf.nonfinite;
    }
  }
  if (leaf.mismatches) {
    leaf.ok = false;
    if (leaf.nonfinite)
      leaf.message = fmt::format("{} of {} elements are NaN or Inf where {} is finite, first at {}: got {}, "
                                 "{} {}",
                                 leaf.nonfinite, n, other, leaf.first_index, leaf.first_got, other, leaf.first_want);
    else if (tol.atol == 0 && tol.rtol == 0)
      leaf.message = fmt::format("{} of {} elements differ from {}, first at {}: got {}, {} {}", leaf.mismatches, n,
                                 other, leaf.first_index, leaf.first_got, other, leaf.first_want);
    else
      leaf.message = fmt::format("{} of {} elements differ beyond atol={} rtol={} (max abs error {}, max rel "
                                 "error {}), first at {}: got {}, {} {}",
                                 leaf.mismatches, n, tol.atol, tol.rtol, number(leaf.max_abs_error),
                                 number(leaf.max_rel_error), leaf.first_index, leaf.first_got, other, leaf.first_want);
  }
}

bool plain_equal(const json& a, const json& b, tolerance tol) {
  if (a.is_number_float() || b.is_number_float()) {
    if (!a.is_number() || !b.is_number()) return false;
    const double x = a.get<double>(), y = b.get<double>();
    return std::fabs(x - y) <= tol.atol + tol.rtol * std::fabs(y);
  }
  return a == b;
}

struct walker {
  const tensor_file& gf;
  const tensor_file& wf;
  tolerance tol;
  comparison& out;

  void fail(const std::string& path, std::string message) {
    leaf_comparison leaf;
    leaf.path = path;
    leaf.ok = false;
    leaf.message = std::move(message);
    out.leaves.push_back(std::move(leaf));
  }

  void walk(const json& got, const json& want, const std::string& path) {
    const std::string gk = kind_of(got), wk = kind_of(want);
    const bool seq_g = gk == "tuple" || gk == "list", seq_w = wk == "tuple" || wk == "list";
    if (gk != wk && !(seq_g && seq_w))
      return fail(path, fmt::format("{} but the reference returns {}", describe(got), describe(want)));
    if (wk == "tensor") {
      leaf_comparison leaf;
      leaf.path = path;
      compare_tensors(gf.tensor(got["tensor"]), wf.tensor(want["tensor"]), tol, leaf);
      out.leaves.push_back(std::move(leaf));
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
      const bool same = wk == "value" ? plain_equal(got["value"], want["value"], tol) : got == want;
      if (!same) {
        leaf.ok = false;
        leaf.message = fmt::format("{} but the reference returns {}", describe(got), describe(want));
      }
      out.leaves.push_back(std::move(leaf));
    }
  }
};

// The tensor leaves of a tree, in tensor_file order (depth first, dict keys before values).
void tensor_leaves(const json& node, const std::string& path, std::vector<std::pair<std::string, std::string>>& out) {
  const std::string k = kind_of(node);
  if (k == "tensor") {
    out.emplace_back(path, node["tensor"].get<std::string>());
  } else if (k == "tuple" || k == "list") {
    const json& items = *node.begin();
    for (std::size_t i = 0; i < items.size(); ++i) tensor_leaves(items[i], fmt::format("{}[{}]", path, i), out);
  } else if (k == "dict") {
    for (const json& pair : node["dict"]) {
      tensor_leaves(pair.at(0), path + "<key>", out);
      tensor_leaves(pair.at(1), fmt::format("{}[{}]", path, pair.at(0).dump()), out);
    }
  }
}

}  // namespace

std::string comparison::first_failure() const {
  for (const auto& leaf : leaves)
    if (!leaf.ok) return fmt::format("{}: {}", leaf.path, leaf.message);
  return {};
}

comparison compare_outputs(const json& got, const tensor_file& gf, const json& want, const tensor_file& wf,
                           tolerance tol) {
  comparison out;
  walker{gf, wf, tol, out}.walk(got, want, "output");
  for (const auto& leaf : out.leaves) out.ok = out.ok && leaf.ok;
  return out;
}

comparison compare_unchanged_inputs(const json& got, const tensor_file& gf, const json& want,
                                    const tensor_file& wf, const std::vector<bool>& mutated) {
  comparison out;
  std::vector<std::pair<std::string, std::string>> g, w;
  tensor_leaves(got, "input", g);
  tensor_leaves(want, "input", w);
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (i < mutated.size() && mutated[i]) continue;
    leaf_comparison leaf;
    leaf.path = w[i].first;
    if (i >= g.size()) {
      leaf.ok = false;
      leaf.message = "missing after the call";
    } else {
      const tensor_view& a = gf.tensor(g[i].second);
      const tensor_view& b = wf.tensor(w[i].second);
      if (a.shape != b.shape || a.dtype != b.dtype || a.bytes != b.bytes) {
        // Exact comparison (zero tolerance), reported like an output mismatch.
        compare_tensors(a, b, tolerance{0, 0}, leaf, "the value before the call");
        if (leaf.ok) {  // only -0.0 vs 0.0 or NaN payloads differ
          leaf.ok = false;
          leaf.message = "its bytes changed";
        }
        leaf.message = fmt::format("the call modified this input, which the reference leaves unchanged: {}",
                                   leaf.message);
      }
    }
    out.ok = out.ok && leaf.ok;
    out.leaves.push_back(std::move(leaf));
  }
  return out;
}

}  // namespace pk::bench
