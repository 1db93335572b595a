#include "agent/run/pkb_tool/profile.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "agent/run/pkb_tool/compiler_output.h"

namespace pk::pkb {
namespace {

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Splits CSV text into rows of fields (RFC 4180 quoting). Hand-written: ncu's CSV is the only CSV
// pkagent reads, and these 25 lines are less than a dependency for it.
std::vector<std::vector<std::string>> csv_rows(std::string_view text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"') {
      quoted = any = true;
    } else if (c == ',') {
      row.push_back(std::move(field)), field.clear(), any = true;
    } else if (c == '\n' || c == '\r') {
      if (any || !field.empty()) row.push_back(std::move(field)), rows.push_back(std::move(row));
      field.clear(), row.clear(), any = false;
    } else {
      field += c, any = true;
    }
  }
  if (any || !field.empty()) row.push_back(std::move(field)), rows.push_back(std::move(row));
  return rows;
}

std::optional<double> number(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  if (s.empty() || s == "n/a") return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    return used == s.size() ? std::optional<double>(v) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Scale of a unit to microseconds (time) or to bytes (sizes); ncu's prefixes are decimal.
double time_scale_us(const std::string& unit) {
  if (unit == "nsecond" || unit == "ns") return 1e-3;
  if (unit == "msecond" || unit == "ms") return 1e3;
  if (unit == "second" || unit == "s") return 1e6;
  return 1;  // usecond
}
double byte_scale(const std::string& unit) {
  if (unit.rfind("Kbyte", 0) == 0 || unit == "KB") return 1e3;
  if (unit.rfind("Mbyte", 0) == 0 || unit == "MB") return 1e6;
  if (unit.rfind("Gbyte", 0) == 0 || unit == "GB") return 1e9;
  if (unit.rfind("Tbyte", 0) == 0 || unit == "TB") return 1e12;
  return 1;
}

// "void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)" -> a name that fits a column.
std::string short_name(std::string n, std::size_t width = 48) {
  if (n.rfind("void ", 0) == 0) n.erase(0, 5);
  if (n.size() > width) n = n.substr(0, width - 3) + "...";
  return n;
}

std::string opt(const std::optional<double>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : "n/a";
}

}  // namespace

std::string profile_command(const profile_request& r) {
  std::string gpus;
  for (int g = 0; g < r.world; ++g) gpus += fmt::format("{}{}", g ? "," : "", g);
  const std::string eval =
      fmt::format("eval --problem {} --suite-dir {} --solution /workspace/solution.py --world {} --trials 1 "
                  "--no-perf --device cuda --sandbox none --gpus {} --seed {} -q",
                  r.problem_id, quote(r.suite_dir.string()), r.world, gpus, r.seed);
  // NCCL's kernels wait for their peers; under the profiler's serialisation of kernels across
  // processes two ranks' NCCL kernels would wait for each other for ever, so they are left out.
  const std::string no_nccl = "regex:^([^n]|n[^c]|nc[^c]|ncc[^l])";
  std::string stopped = r.stopped_note;
  while (!stopped.empty() && stopped.back() == '\n') stopped.pop_back();
  return fmt::format(
      "NCU={ncu}; PK={pk}; export PKAGENT_CACHE=/tmp/pkb-profile-cache\n"
      "echo '==PKB== check'\n"
      "\"$PK\" {eval} 2>&1 | grep -v 'warning: --sandbox none' | tail -n 40\n"
      "M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,"
      "sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread\n"
      "avail=$(\"$NCU\" --query-metrics 2>/dev/null | awk '{{print $1}}')\n"
      "for m in nvlrx__bytes nvltx__bytes smsp__sass_inst_executed_op_local_ld smsp__sass_inst_executed_op_local_st; "
      "do printf '%s\\n' \"$avail\" | grep -qx \"$m\" && M=\"$M,$m.sum\"; done\n"
      "echo '==PKB== ncu'\n"
      "rm -f /workspace/profile.ncu-rep\n"
      "{limit}\"$NCU\" --clock-control none --target-processes all --launch-count 400 --kernel-name {no_nccl} "
      "--metrics \"$M\" -f -o /workspace/profile \"$PK\" {eval} >/tmp/pkb-ncu.log 2>&1; ncu_exit=$?\n"
      "[ $ncu_exit -eq 124 ] && echo {stopped}\n"
      "grep -E '^==(ERROR|WARNING)==' /tmp/pkb-ncu.log | head -n 20\n"
      "[ $ncu_exit -ne 0 ] && tail -n 30 /tmp/pkb-ncu.log\n"
      "if [ -s /workspace/profile.ncu-rep ]; then echo '{marker}'; \"$NCU\" --import /workspace/profile.ncu-rep --csv "
      "--page raw --print-units base --print-kernel-base function; fi\n"
      "exit $ncu_exit\n",
      fmt::arg("ncu", quote(r.ncu.string())), fmt::arg("pk", quote(r.pkagent.string())), fmt::arg("eval", eval),
      fmt::arg("no_nccl", quote(no_nccl)), fmt::arg("marker", csv_marker), fmt::arg("stopped", quote(stopped)),
      fmt::arg("limit", r.ncu_timeout_s > 0 ? fmt::format("timeout -k 5 {} ", r.ncu_timeout_s) : std::string()));
}

std::vector<kernel_summary> parse_ncu_csv(std::string_view csv) {
  const auto rows = csv_rows(csv);
  std::size_t h = 0;
  auto col = [&](std::string_view name) -> std::optional<std::size_t> {
    const auto& head = rows[h];
    for (std::size_t i = 0; i < head.size(); ++i)
      if (head[i] == name) return i;
    return std::nullopt;
  };
  while (h < rows.size() && std::find(rows[h].begin(), rows[h].end(), "Kernel Name") == rows[h].end()) ++h;
  if (h == rows.size()) throw std::runtime_error("ncu's CSV has no \"Kernel Name\" column");
  const auto name_c = col("Kernel Name"), id_c = col("ID"), time_c = col("gpu__time_duration.sum"),
             dram_c = col("dram__throughput.avg.pct_of_peak_sustained_elapsed"),
             sm_c = col("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
             regs_c = col("launch__registers_per_thread"), rx_c = col("nvlrx__bytes.sum"),
             tx_c = col("nvltx__bytes.sum"), ld_c = col("smsp__sass_inst_executed_op_local_ld.sum"),
             st_c = col("smsp__sass_inst_executed_op_local_st.sum");
  std::vector<std::string> units;
  struct acc {
    kernel_summary k;
    double dram = 0, sm = 0, nvl = 0, local = 0;
    int n_dram = 0, n_sm = 0, n_nvl = 0, n_local = 0;
  };
  std::map<std::string, acc> by_name;
  std::vector<std::string> order;
  for (std::size_t r = h + 1; r < rows.size(); ++r) {
    const auto& row = rows[r];
    auto at = [&](const std::optional<std::size_t>& c) -> std::string { return c && *c < row.size() ? row[*c] : ""; };
    if (id_c && at(id_c).empty()) {  // the units row
      units = row;
      continue;
    }
    if (!name_c || at(name_c).empty()) continue;
    auto unit = [&](const std::optional<std::size_t>& c) -> std::string {
      return c && *c < units.size() ? units[*c] : "";
    };
    const std::string name = at(name_c);
    if (!by_name.count(name)) order.push_back(name);
    acc& a = by_name[name];
    a.k.name = name;
    ++a.k.launches;
    const auto t = number(at(time_c));
    if (t) a.k.total_us += *t * time_scale_us(unit(time_c).empty() ? "nsecond" : unit(time_c));
    if (auto v = number(at(dram_c))) a.dram += *v, ++a.n_dram;
    if (auto v = number(at(sm_c))) a.sm += *v, ++a.n_sm;
    if (auto v = number(at(regs_c))) a.k.registers = std::max(a.k.registers.value_or(0), static_cast<int>(*v));
    const auto rx = number(at(rx_c)), tx = number(at(tx_c));
    if ((rx || tx) && t && *t > 0) {
      const double bytes = rx.value_or(0) * byte_scale(unit(rx_c)) + tx.value_or(0) * byte_scale(unit(tx_c));
      const double us = *t * time_scale_us(unit(time_c).empty() ? "nsecond" : unit(time_c));
      a.nvl += bytes / (us * 1e3);  // bytes per microsecond / 1e3 = GB/s
      ++a.n_nvl;
    }
    const auto ld = number(at(ld_c)), st = number(at(st_c));
    if (ld || st) a.local += ld.value_or(0) + st.value_or(0), ++a.n_local;
  }
  std::vector<kernel_summary> out;
  for (const auto& name : order) {
    acc& a = by_name[name];
    if (a.n_dram) a.k.dram_pct = a.dram / a.n_dram;
    if (a.n_sm) a.k.sm_pct = a.sm / a.n_sm;
    if (a.n_nvl) a.k.nvlink_gbps = a.nvl / a.n_nvl;
    if (a.n_local) a.k.local_ops = a.local / a.n_local;
    out.push_back(a.k);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.total_us > y.total_us; });
  return out;
}

std::string summarize_profile(std::string_view output, int exit_code, const profile_texts& texts,
                              std::size_t max_rows) {
  const auto marker = output.find(csv_marker);
  const std::string_view before = output.substr(0, marker);
  std::string text;
  // The check of the profiled trial, and ncu's own messages, as the command printed them.
  const auto ncu_at = before.find("==PKB== ncu");
  std::string check(before.substr(0, ncu_at));
  if (check.rfind("==PKB== check\n", 0) == 0) check.erase(0, 14);
  const std::string ncu_log(ncu_at == std::string_view::npos ? std::string_view() : before.substr(ncu_at + 12));
  if (!check.empty()) text += texts.trial.render({}) + check;
  if (marker == std::string_view::npos) {
    if (exit_code == 0 && ncu_log.find("No kernels were profiled") != std::string::npos)
      return text + texts.no_kernels.render({{"left_out", "1"}});
    const bool restricted = ncu_log.find("ERR_NVGPUCTRPERM") != std::string::npos;
    text += texts.failed.render({{"exit_code", std::to_string(exit_code)}, {"counters_restricted", restricted ? "1" : ""}});
    // ncu's errors and warnings plus the last 30 lines of its output: short enough to show whole.
    return text + (ncu_log.size() <= 6000 ? ncu_log : shape_compiler_output(ncu_log));
  }
  if (!ncu_log.empty()) text += ncu_log;
  std::vector<kernel_summary> ks;
  try {
    ks = parse_ncu_csv(output.substr(marker + csv_marker.size()));
  } catch (const std::exception& e) {
    return text + texts.unreadable.render({{"reason", e.what()}});
  }
  int launches = 0;
  double total = 0;
  for (const auto& k : ks) launches += k.launches, total += k.total_us;
  text += texts.summary.render({{"launches", std::to_string(launches)},
                                {"kernels", std::to_string(ks.size())},
                                {"kernel_us", fmt::format("{:.1f}", total)}});
  if (ks.empty()) return text + texts.no_kernels.render({{"left_out", ""}});
  text += fmt::format("{:<48} {:>6} {:>10} {:>9} {:>6} {:>6} {:>11} {:>5} {:>11}\n", "kernel", "calls", "total us",
                      "mean us", "DRAM%", "SM%", "NVLink GB/s", "regs", "local ld/st");
  for (std::size_t i = 0; i < ks.size() && i < max_rows; ++i) {
    const auto& k = ks[i];
    text += fmt::format("{:<48} {:>6} {:>10.1f} {:>9.2f} {:>6} {:>6} {:>11} {:>5} {:>11}\n", short_name(k.name),
                        k.launches, k.total_us, k.total_us / std::max(1, k.launches), opt(k.dram_pct, "{:.1f}"),
                        opt(k.sm_pct, "{:.1f}"), opt(k.nvlink_gbps, "{:.1f}"),
                        k.registers ? std::to_string(*k.registers) : "n/a", opt(k.local_ops, "{:.0f}"));
  }
  if (ks.size() > max_rows) {
    double rest = 0;
    for (std::size_t i = max_rows; i < ks.size(); ++i) rest += ks[i].total_us;
    text += texts.more.render(
        {{"count", std::to_string(ks.size() - max_rows)}, {"kernel_us", fmt::format("{:.1f}", rest)}});
  }
  return text + texts.legend.render({});
}

}  // namespace pk::pkb
