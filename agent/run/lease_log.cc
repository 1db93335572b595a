#include "agent/run/lease_log.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace pk::run {

lease_log::lease_log(scheduler::gpu_scheduler& gpus, const std::filesystem::path& file)
    : gpus_(gpus), out_(file, std::ios::app) {
  if (!out_) throw std::runtime_error(fmt::format("{}: cannot write", file.string()));
  gpus_.on_lease_end([this](const scheduler::lease_record& r) {
    const nlohmann::json line = {{"holder", r.holder}, {"gpus", r.gpus}, {"start", r.start_s}, {"end", r.end_s}};
    std::lock_guard lock(mu_);
    out_ << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n' << std::flush;
  });
}

lease_log::~lease_log() { gpus_.on_lease_end(nullptr); }

}  // namespace pk::run
