#include "bench/eval/worker_plan.h"

#include <algorithm>
#include <string>
#include <vector>

namespace pk::bench {

nlohmann::json worker_plan(const problem& p, int world) {
  using json = nlohmann::json;
  json shape = json::object();
  for (const auto& [k, v] : p.shape) shape[k] = v;
  json mesh = nullptr;
  if (p.mesh) mesh = {{"axes", p.mesh->axes}, {"sizes", p.mesh_sizes(world)}};
  json args = json::array();
  for (const input_decl& a : p.args)
    args.push_back({{"name", a.name}, {"type", a.type}, {"dtype", a.dtype.empty() ? json(nullptr) : json(a.dtype)},
                    {"group", a.group.empty() ? json(nullptr) : json(a.group)}, {"in_place", a.in_place}});
  std::vector<std::string> judge_data;
  auto want_keys = [&](const compare_rule& r) {
    if (!r.keys.empty() && std::find(judge_data.begin(), judge_data.end(), r.keys) == judge_data.end())
      judge_data.push_back(r.keys);
  };
  for (const output_decl& o : p.outputs) want_keys(o.rule);
  for (const input_decl& a : p.args) want_keys(a.rule);
  json second = nullptr;
  if (p.second && p.second->changes_anything())
    second = {{"normal", to_string(p.second->normal)},
              {"uniform", to_string(p.second->uniform)},
              {"integers", to_string(p.second->integers)}};
  return {{"id", p.id},
          {"name", p.name()},
          {"dtype", p.dtype},
          {"shape", shape},
          {"mesh", mesh},
          {"args", args},
          {"in_place", p.in_place_positions()},
          {"judge_data", judge_data},
          {"second_distribution", second},
          {"digest_above_bytes", input_digest_threshold_bytes}};
}

}  // namespace pk::bench
