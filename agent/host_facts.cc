#include "agent/host_facts.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

namespace pk::agent {

nlohmann::json host_facts() {
  utsname u{};
  uname(&u);
  nlohmann::json models = nlohmann::json::array();
  std::error_code ec;
  for (const auto& gpu : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    std::ifstream info(gpu.path() / "information");
    std::string line;
    while (std::getline(info, line))
      if (line.rfind("Model:", 0) == 0) models.push_back(line.substr(line.find_first_not_of(" \t", 6)));
  }
  return {{"hostname", u.nodename},
          {"kernel", u.release},
          {"cpus", std::thread::hardware_concurrency()},
          {"gpus", {{"count", models.size()}, {"models", models}}}};
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
