#include "bench/qa/discrimination.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

#include "bench/eval/reference_cache.h"
#include "bench/eval/sets/staging.h"
#include "bench/eval/tensor_compare.h"
#include "bench/eval/tensor_file.h"
#include "config/paths.h"

namespace pk::bench {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read", p.string()));
  return {std::istreambuf_iterator<char>(in), {}};
}

// A candidate that behaves as modes[t / calls_per_mode] in trial t (bench/qa/wrong_candidate.py).
fs::path write_candidate(const fs::path& dir, const problem& p, const std::vector<std::string>& modes,
                         int calls_per_mode) {
  // JSON string literals are Python string literals: the reference's text travels unchanged.
  const std::string text =
      fmt::format("MODES = {}\nCALLS_PER_MODE = {}\nIN_PLACE = {}\nREFERENCE_SOURCE = {}\n{}", json(modes).dump(),
                  calls_per_mode, json(p.in_place_positions()).dump(), json(read_text(p.reference)).dump(),
                  read_text(config::data_path("bench/qa/wrong_candidate.py")));
  const fs::path file = dir / fmt::format("wrong_{}.py", modes.size() == 1 ? modes[0] : "all");
  std::ofstream(file) << text;
  return file;
}

// The tensor leaves of a recorded tree, depth first.
void tensor_leaves(const json& node, std::vector<std::string>& out) {
  if (!node.is_object() || node.size() != 1) return;
  const std::string k = node.begin().key();
  if (k == "tensor") out.push_back(node["tensor"].get<std::string>());
  else if (k == "tuple" || k == "list")
    for (const json& v : *node.begin()) tensor_leaves(v, out);
  else if (k == "dict")
    for (const json& pair : node["dict"]) tensor_leaves(pair.at(1), out);
}

bool same_values(const tensor_view& a, const tensor_view& b) {
  if (a.shape != b.shape || dtype_kind(a.dtype) == 'c' || dtype_kind(b.dtype) == 'c') return false;
  for (std::uint64_t i = 0; i < a.numel(); ++i)
    if (element(a, i) != element(b, i)) return false;
  return true;
}

// Whether a wrong candidate differs from the reference at all, from the reference's own records: the
// `inputs` candidate is the reference where no output has an input's shape (or equals that input, as
// 6's non-root ranks return their input) and nothing is in place; `rank0_output` is the reference
// where every rank returns what rank 0 returns.
// `files` holds the trials the mode ran on, every rank of each.
std::string not_applicable(const std::string& mode, const problem& p,
                           const std::vector<std::vector<tensor_file>>& files) {
  if (mode == "inputs") {
    if (!p.in_place_positions().empty()) return "";
    for (const auto& ranks : files)
      for (const tensor_file& f : ranks) {
        std::vector<std::string> outs, ins;
        tensor_leaves(f.tree("output"), outs);
        tensor_leaves(f.tree("inputs"), ins);
        for (const std::string& o : outs) {
          const tensor_view& out = f.tensor(o);
          for (const std::string& i : ins)
            if (f.tensor(i).shape == out.shape) {
              if (!same_values(f.tensor(i), out)) return "";
              break;  // the candidate takes the first input of that shape
            }
        }
      }
    return "no output has the shape of an input it differs from";
  }
  if (mode == "rank0_output") {
    for (const auto& ranks : files)
      for (std::size_t r = 1; r < ranks.size(); ++r)
        if (!compare_outputs(ranks[r].tree("output"), ranks[r], ranks[0].tree("output"), ranks[0],
                             compare_spec::uniform(compare_rule::of(compare_mode::exact)))
                 .ok)
          return "";
    return "every rank returns the same outputs";
  }
  return "";
}

}  // namespace

const std::vector<std::string>& wrong_candidate_modes() {
  static const std::vector<std::string> modes = {"no_comm", "local_only", "zeros", "inputs", "rank0_output"};
  return modes;
}

namespace {

// The modes that may be right answers at a degenerate world: those that differ from the reference only
// in skipping communication, and at one rank the unmodified inputs too, since every collective of one
// rank returns what it was given.
bool right_where_degenerate(const std::string& mode, int world) {
  return mode == "no_comm" || mode == "local_only" || (world == 1 && mode == "inputs");
}

}  // namespace

bool discrimination_result::ok() const {
  if (reference_verdict != "correct") return false;
  for (const auto& c : candidates)
    if (c.applicable && c.verdict == "correct" && !c.right_here) return false;
  return true;
}

namespace {

struct mode_outcome {
  std::string verdict, note;
};

// Every mode in one run of the ranks: trial t judges mode t / k. When the run ends without per-trial
// results (a crash or a hang in some mode), each mode runs on its own.
std::vector<mode_outcome> judge_modes(const problem& p, const eval_options& base, const std::vector<std::string>& modes,
                                      const fs::path& dir) {
  const int k = base.trials;
  std::vector<mode_outcome> out(modes.size());
  eval_options o = base;
  o.trials = k * static_cast<int>(modes.size());
  const eval_report all = evaluate(p, write_candidate(dir, p, modes, k), o);
  if (all.result == verdict::correct || all.result == verdict::mismatch) {
    for (std::size_t m = 0; m < modes.size(); ++m) {
      bool correct = true;
      for (int t = 0; t < k; ++t) {
        const trial_report& tr = all.trials.at(m * static_cast<std::size_t>(k) + static_cast<std::size_t>(t));
        correct = correct && tr.correct;
        for (const rank_check& c : tr.ranks)
          if (!c.ok && out[m].note.empty())
            out[m].note = fmt::format("trial {}, rank {}: {}", tr.trial, c.rank, c.message);
      }
      out[m].verdict = to_string(correct ? verdict::correct : verdict::mismatch);
    }
    return out;
  }
  for (std::size_t m = 0; m < modes.size(); ++m) {
    const eval_report one = evaluate(p, write_candidate(dir, p, {modes[m]}, k), base);
    out[m] = {to_string(one.result), one.message};
  }
  return out;
}

}  // namespace

discrimination_result check_discrimination(const problem& p, const eval_options& options) {
  const auto t0 = std::chrono::steady_clock::now();
  eval_options o = options;
  o.perf = false;
  discrimination_result res;
  res.problem = p.name();
  res.world = o.world;
  res.degenerate = p.degenerate_at(o.world);
  res.degenerate_why = p.degenerate_why_at(o.world);
  std::vector<std::string> modes = {"reference"};
  modes.insert(modes.end(), wrong_candidate_modes().begin(), wrong_candidate_modes().end());
  const scratch_dir dir(false);  // the generated candidates
  std::vector<mode_outcome> outcomes;
  try {
    outcomes = judge_modes(p, o, modes, dir.path());
  } catch (const evaluation_error& e) {
    res.reference_verdict = "error";
    res.reference_note = e.what();
  }
  if (!outcomes.empty()) {
    res.reference_verdict = outcomes[0].verdict;
    res.reference_note = outcomes[0].note;
    // The reference's records of every trial and rank tell which candidates differ from it at all.
    const reference_cache cache(o.cache_root.empty() ? reference_cache::default_root() : o.cache_root);
    const reference_key key = reference_key_of(p, o);
    for (std::size_t m = 1; m < modes.size(); ++m) {
      std::vector<std::vector<tensor_file>> files;
      for (int t = static_cast<int>(m) * o.trials; t < static_cast<int>(m + 1) * o.trials; ++t) {
        files.emplace_back();
        for (int r = 0; r < o.world; ++r) files.back().push_back(tensor_file::read(cache.output_file(p, key, t, r)));
      }
      wrong_candidate_verdict v;
      v.mode = modes[m];
      v.note = not_applicable(v.mode, p, files);
      v.applicable = v.note.empty();
      if (v.applicable) v.verdict = outcomes[m].verdict, v.note = outcomes[m].note;
      v.right_here = res.degenerate && v.verdict == "correct" && right_where_degenerate(v.mode, o.world);
      res.candidates.push_back(std::move(v));
    }
  }
  res.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

json to_json(const discrimination_result& r) {
  json candidates = json::array();
  for (const auto& c : r.candidates)
    candidates.push_back({{"mode", c.mode}, {"applicable", c.applicable},
                          {"verdict", c.applicable ? json(c.verdict) : json(nullptr)}, {"note", c.note},
                          {"right_here", c.right_here}});
  return {{"problem", r.problem},           {"world", r.world},        {"degenerate", r.degenerate},
          {"reference", r.reference_verdict}, {"reference_note", r.reference_note},
          {"candidates", candidates},       {"ok", r.ok()},            {"wall_seconds", r.wall_seconds}};
}

std::string render_table(const std::vector<discrimination_result>& results) {
  std::size_t width = 7;
  for (const auto& r : results) width = std::max(width, r.problem.size() + (r.degenerate ? 2 : 0));
  std::string out = fmt::format("{:<{}} {:>2}  {:<13}", "problem", width, "W", "reference");
  for (const std::string& m : wrong_candidate_modes()) out += fmt::format(" {:<14}", m);
  out += "  seconds\n";
  for (const auto& r : results) {
    out += fmt::format("{:<{}} {:>2}  {:<13}", r.problem + (r.degenerate ? " *" : ""), width, r.world,
                       r.reference_verdict);
    for (const auto& c : r.candidates) {
      std::string cell = c.verdict;
      if (!c.applicable)
        cell = "n/a";
      else if (c.right_here)
        cell = "right here";
      else if (c.verdict == "correct")
        cell = "VACUOUS";
      out += fmt::format(" {:<14}", cell);
    }
    out += fmt::format("  {:.0f}\n", r.wall_seconds);
  }
  if (std::any_of(results.begin(), results.end(), [](const auto& r) { return r.degenerate; }))
    out += "* a degenerate world size for this problem (its communication pattern does not occur there: a "
           "candidate that skips communication may be right, \"right here\")\n";
  return out;
}

}  // namespace pk::bench
