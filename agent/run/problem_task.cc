#include "agent/run/problem_task.h"

#include <fstream>
#include <regex>

#include <fmt/format.h>

#include "agent/prompt_template.h"
#include "agent/run/atomic_file.h"
#include "bench/suite/roofline.h"
#include "config/paths.h"
#include "config/read_file.h"

namespace pk::run {
namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw std::runtime_error(fmt::format("{}: cannot write", file.string()));
}

std::string si(double value, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int i = 0;
  while (value >= 1000 && i < 5) value /= 1000, ++i;
  return fmt::format("{:.4g} {}{}", value, prefixes[i], unit);
}

std::string duration(double seconds) {
  if (seconds <= 0) return "-";
  if (seconds < 1e-3) return fmt::format("{:.1f} us", seconds * 1e6);
  return fmt::format("{:.3f} ms", seconds * 1e3);
}

fs::path kernels_runtime_include() { return config::data_path("kernels_runtime/include"); }
fs::path kernels_runtime_doc() { return config::data_path("docs/kernels_runtime.md"); }

}  // namespace

std::string signature_of(const std::string& source) {
  static const std::regex def(R"(def\s+solution\s*\(([^)]*)\)\s*(->\s*[^:]+)?:)");
  std::smatch m;
  if (!std::regex_search(source, m, def)) return "";
  std::string args = std::regex_replace(m[1].str(), std::regex(R"(\s+)"), " ");
  std::string ret = std::regex_replace(m[2].str(), std::regex(R"(\s+)"), " ");
  while (!args.empty() && args.back() == ' ') args.pop_back();
  while (!ret.empty() && ret.back() == ' ') ret.pop_back();
  return fmt::format("def solution({}){}{}", args, ret.empty() ? "" : " ", ret);
}

std::string docstring_of(const std::string& source) {
  static const std::regex doc(R"(^\s*(?:#[^\n]*\n\s*)*(?:"""|''')([\s\S]*?)(?:"""|'''))");
  std::smatch m;
  if (!std::regex_search(source, m, doc)) return "";
  std::string text = m[1].str();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

bool kernels_runtime_available() {
  std::error_code ec;
  return fs::is_directory(kernels_runtime_include(), ec) && fs::exists(kernels_runtime_doc(), ec);
}

std::string reference_text(const bench::problem& problem) {
  std::string ref = read_file(problem.reference);
  while (!ref.empty() && ref.back() == '\n') ref.pop_back();
  return ref;
}

std::string render_problem(const bench::problem& problem, const problem_view& v, const fs::path& prompts_dir) {
  static const std::set<std::string> vars = {
      "id", "title", "backend", "kernels_runtime", "reference", "signature", "world", "shape", "dtype",
      "device", "inputs_doc", "atol", "rtol", "final_trials", "check_trials", "machine", "spec", "no_spec",
      "spec_name", "gpu", "sm_count", "l2", "link_bw", "hbm_bw", "bf16_flops", "bound", "limiter"};
  const auto tpl = agent::prompt_template::load(prompts_dir / "problem" / "problem.md", vars);
  const std::string reference = reference_text(problem);
  std::string shape;
  for (const auto& [name, value] : problem.shape)
    shape += fmt::format("{}{} = {}", shape.empty() ? "" : ", ", name, value);
  agent::template_vars t = {{"id", std::to_string(problem.id)},
                            {"title", problem.title},
                            {"backend", v.device == bench::device_kind::cuda ? "NCCL" : "gloo, on CPU for this run"},
                            {"kernels_runtime", v.kernels_runtime ? "1" : ""},
                            {"reference", reference},
                            {"signature", signature_of(reference)},
                            {"world", std::to_string(v.world)},
                            {"shape", shape.empty() ? "none" : shape},
                            {"dtype", problem.dtype},
                            {"device", to_string(v.device)},
                            {"inputs_doc", docstring_of(read_file(problem.inputs))},
                            {"atol", fmt::format("{:g}", problem.atol)},
                            {"rtol", fmt::format("{:g}", problem.rtol)},
                            {"final_trials", std::to_string(v.final_trials)},
                            {"check_trials", std::to_string(v.check_trials)},
                            {"machine", v.machine.summary()},
                            {"spec", v.machine.spec ? "1" : ""},
                            {"no_spec", v.machine.missing_spec()}};
  if (const auto& hw = v.machine.spec) {
    const bench::roofline_bound b = bench::roofline(problem, v.world, *hw);
    t.insert({{"spec_name", hw->name},
              {"gpu", hw->gpu},
              {"sm_count", std::to_string(hw->sm_count)},
              {"l2", fmt::format("{} MiB", hw->l2_bytes >> 20)},
              {"link_bw", si(hw->link_bw, "B/s")},
              {"hbm_bw", si(hw->hbm_bw, "B/s")},
              {"bf16_flops", si(hw->bf16_flops, "FLOP/s")},
              {"bound", duration(b.seconds())},
              {"limiter", b.limiter()}});
  }
  return tpl.render(t);
}

bool write_task_dir(const fs::path& dir, const bench::problem& problem, const std::string& problem_md,
                    const fs::path& prompts_dir) {
  // A name of this process's own: shards of a run on several hosts may write the same task at once.
  const fs::path partial = dir.string() + "." + unique_suffix() + ".partial";
  fs::remove_all(partial);
  fs::create_directories(partial);
  write_file(partial / "PROBLEM.md", problem_md);
  fs::copy_file(problem.reference, partial / "reference.py");
  fs::copy_file(prompts_dir / "problem" / "solution_stub.py", partial / "solution.py");
  const bool kr = kernels_runtime_available();
  if (kr) {
    fs::copy(kernels_runtime_include(), partial / "kernels_runtime", fs::copy_options::recursive);
    fs::copy_file(kernels_runtime_doc(), partial / "kernels_runtime.md");
  }
  // Readers never see a half-written task. When another process put the same task in place first,
  // its copy stands (episodes may be copying from it); a task that changed is replaced.
  std::error_code ec;
  fs::rename(partial, dir, ec);
  if (ec && fs::exists(dir / "PROBLEM.md") && read_file(dir / "PROBLEM.md") == problem_md) {
    fs::remove_all(partial);
  } else if (ec) {
    fs::remove_all(dir);
    fs::rename(partial, dir);
  }
  return kr;
}

void update_task_dir(const fs::path& dir, const bench::problem& problem, const std::string& problem_md,
                     const fs::path& prompts_dir) {
  std::error_code ec;
  if (fs::exists(dir / "PROBLEM.md", ec) && read_file(dir / "PROBLEM.md") == problem_md) return;
  write_task_dir(dir, problem, problem_md, prompts_dir);
}

}  // namespace pk::run
