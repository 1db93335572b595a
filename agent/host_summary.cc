#include "agent/host_summary.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <thread>

#include "sandbox/gpu_devices.h"

namespace pk::agent {

nlohmann::json host_summary() {
  utsname u{};
  uname(&u);
  const auto gpus = sandbox::list_host_gpus();
  nlohmann::json models = nlohmann::json::array();
  for (const auto& gpu : gpus)
    if (!gpu.model.empty()) models.push_back(gpu.model);
  return {{"hostname", u.nodename},
          {"kernel", u.release},
          {"cpus", std::thread::hardware_concurrency()},
          {"gpus", {{"count", gpus.size()}, {"models", models}}}};
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace pk::agent
