#include "sandbox/gpu_topology.h"

#include <algorithm>
#include <chrono>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sandbox/process.h"

namespace pk::sandbox {

namespace {

std::vector<std::string> tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

// "GPU3" -> 3; -1 for anything else (NIC0, CPU, "Affinity").
int gpu_number(const std::string& token) {
  static const std::regex gpu(R"(GPU(\d+))");
  std::smatch m;
  return std::regex_match(token, m, gpu) ? std::stoi(m[1].str()) : -1;
}

}  // namespace

gpu_topology parse_gpu_topology(const std::string& text) {
  static const std::regex escape(R"(\x1b\[[0-9;]*[A-Za-z])");
  const std::string plain = std::regex_replace(text, escape, "");
  std::istringstream in(plain);
  gpu_topology t;
  std::vector<int> columns;  // GPU number of each leading header column
  for (std::string line; std::getline(in, line);) {
    const auto cells = tokens(line);
    if (cells.empty()) continue;
    if (columns.empty()) {
      // The header: the first line whose first token is a GPU column.
      for (const auto& c : cells) {
        const int g = gpu_number(c);
        if (g < 0) break;
        columns.push_back(g);
      }
      continue;
    }
    const int row = gpu_number(cells[0]);
    if (row < 0) {
      if (cells[0] == "Legend:") break;
      continue;
    }
    if (cells.size() < columns.size() + 1) continue;
    t.gpu_count = std::max(t.gpu_count, row + 1);
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const int col = columns[i];
      if (col == row) continue;
      t.links[{std::min(row, col), std::max(row, col)}] = cells[i + 1];
    }
  }
  return t;
}

gpu_topology read_gpu_topology() {
  process_spec ps;
  ps.argv = {"nvidia-smi", "topo", "-m"};
  ps.timeout = std::chrono::seconds(30);
  try {
    const auto r = run_process(ps);
    if (r.exit_code != 0 || r.timed_out) return {};
    return parse_gpu_topology(r.out.text);
  } catch (const std::exception&) {
    return {};  // nvidia-smi is not installed
  }
}

std::string describe_links(const gpu_topology& topology, const std::vector<int>& gpus) {
  std::vector<std::pair<std::string, std::vector<std::string>>> kinds;  // link -> pairs, in order of appearance
  for (std::size_t i = 0; i < gpus.size(); ++i)
    for (std::size_t j = i + 1; j < gpus.size(); ++j) {
      const int a = std::min(gpus[i], gpus[j]), b = std::max(gpus[i], gpus[j]);
      const auto it = topology.links.find({a, b});
      const std::string link = it == topology.links.end() ? "unknown" : it->second;
      auto kind = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == link; });
      if (kind == kinds.end()) kind = kinds.insert(kinds.end(), {link, {}});
      kind->second.push_back(fmt::format("{}-{}", a, b));
    }
  if (kinds.size() == 1) return kinds[0].first;
  std::string out;
  for (const auto& [link, pairs] : kinds)
    out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", link, fmt::join(pairs, ", "));
  return out;
}

}  // namespace pk::sandbox
