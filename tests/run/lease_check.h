// Reads a run's OUT/leases.jsonl and counts, over every pair of leases, those that overlapped in
// time on a shared GPU (never allowed) and those that ran side by side on disjoint GPUs.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pk::run::test_support {

struct lease_pairs {
  std::vector<nlohmann::json> leases;  ///< the log's lines
  std::vector<std::string> clashes;    ///< "A overlaps B" for each pair sharing a GPU at once
  int side_by_side = 0;                ///< pairs overlapping in time on disjoint GPUs
};

inline lease_pairs read_lease_pairs(const std::filesystem::path& log) {
  lease_pairs p;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) p.leases.push_back(nlohmann::json::parse(line));
  for (std::size_t i = 0; i < p.leases.size(); ++i)
    for (std::size_t j = i + 1; j < p.leases.size(); ++j) {
      const auto &a = p.leases[i], &b = p.leases[j];
      bool share = false;
      for (int g : a["gpus"])
        for (int h : b["gpus"]) share |= g == h;
      const bool overlap = a["start"].get<double>() < b["end"].get<double>() &&
                           b["start"].get<double>() < a["end"].get<double>();
      if (overlap && share) p.clashes.push_back(a.dump() + " overlaps " + b.dump());
      if (overlap && !share) ++p.side_by_side;
    }
  return p;
}

}  // namespace pk::run::test_support
