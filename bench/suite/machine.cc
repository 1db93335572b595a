#include "bench/suite/machine.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/paths.h"

namespace pk::bench {
namespace fs = std::filesystem;

namespace {

std::string folded(std::string s) {
  const auto paren = s.find(" (");
  if (paren != std::string::npos && !s.empty() && s.back() == ')') s.erase(paren);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

std::string machine::summary() const {
  if (device == device_kind::cpu) return "no GPU: the ranks run on CPU (gloo)";
  const std::string model = gpu_model.empty() ? "GPU of unknown model" : gpu_model;
  if (gpu_count <= 1) return fmt::format("{} x {} (one GPU, no links)", gpu_count, model);
  return fmt::format("{} x {}, linked by {}", gpu_count, model, links.empty() ? "links the driver did not report" : links);
}

std::string machine::missing_spec() const {
  if (spec) return "";
  if (device == device_kind::cpu)
    return "There is no GPU here: the ranks run on CPU with gloo, so timings say nothing about a GPU and no "
           "lower bound is given.";
  return fmt::format("No hardware spec in config/hardware describes {} x {}, so no lower bound is given.", gpu_count,
                     gpu_model.empty() ? "this GPU" : gpu_model);
}

bool spec_matches(const hardware_spec& spec, const std::string& model, int count) {
  return spec.gpu_count == count && !model.empty() && folded(spec.gpu) == folded(model);
}

std::optional<fs::path> matching_spec(const std::string& model, int count, const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".toml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files)
    if (spec_matches(load_hardware_spec(f), model, count)) return f;
  return std::nullopt;
}

fs::path hardware_spec_dir() { return config::data_path("config/hardware"); }

machine describe_machine(device_kind device, int world, const std::vector<sandbox::host_gpu>& host,
                         const std::vector<int>& leasable, const sandbox::gpu_topology& topology,
                         const fs::path& spec_dir) {
  machine m;
  m.device = device;
  if (device == device_kind::cpu) return m;
  m.gpu_count = world;
  std::vector<std::string> models;
  for (const auto& g : host) {
    if (std::find(leasable.begin(), leasable.end(), g.index) == leasable.end() || g.model.empty()) continue;
    if (std::find(models.begin(), models.end(), g.model) == models.end()) models.push_back(g.model);
  }
  m.gpu_model = fmt::format("{}", fmt::join(models, " / "));
  if (world > 1) m.links = sandbox::describe_links(topology, leasable);
  if (models.size() == 1)
    if (const auto file = matching_spec(m.gpu_model, world, spec_dir)) {
      m.spec = load_hardware_spec(*file);
      m.spec_file = *file;
    }
  return m;
}

machine detect_machine(device_kind device, int world, const std::vector<int>& leasable) {
  if (device == device_kind::cpu) return describe_machine(device, world, {}, {}, {}, hardware_spec_dir());
  return describe_machine(device, world, sandbox::list_host_gpus(), leasable,
                          world > 1 ? sandbox::read_gpu_topology() : sandbox::gpu_topology{}, hardware_spec_dir());
}

machine with_spec(machine m, const fs::path& file) {
  m.spec = load_hardware_spec(file);
  m.spec_file = file;
  return m;
}

}  // namespace pk::bench
