#include "bench/metrics/results_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace pk::metrics {
namespace {

using episode_key = std::tuple<std::string, run_mode, std::string, int, int>;

std::runtime_error io_error(const std::filesystem::path& file, std::string_view what) {
  return std::runtime_error(fmt::format("{}: {}: {}", file.string(), what, std::strerror(errno)));
}

// One lock for all appends of this process: O_APPEND already makes each write(2) land whole at the
// end, and the lock also keeps a short write's remainder from being overtaken by another thread.
std::mutex append_mutex;

}  // namespace

std::string describe(const skipped_line& s) { return fmt::format("{}:{}: {}", s.file.string(), s.line, s.reason); }

results_read read_results(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw io_error(file, "cannot open results file");
  results_read out;
  std::map<episode_key, std::size_t> seen;  // index into out.results
  std::vector<std::size_t> lines;           // the line number of each of out.results
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto skip = [&](std::string reason) { out.skipped.push_back({file, number, std::move(reason)}); };
    auto parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) {
      skip(in.eof() ? "not valid JSON (the last line is cut short: was the writer killed?)" : "not valid JSON");
      continue;
    }
    try {
      auto result = result_from_json(parsed);
      episode_key key{result.run_id, result.mode, result.model, result.problem_id, result.sample};
      auto [it, fresh] = seen.emplace(key, out.results.size());
      if (!fresh) {
        episode_result& earlier = out.results[it->second];
        if (is_infrastructure_failure(earlier)) {  // the episode was retried: the later line stands
          earlier = std::move(result);
          lines[it->second] = number;
          continue;
        }
        skip(fmt::format("duplicate of line {} (run {}, problem {}, sample {}); the first is kept", lines[it->second],
                         result.run_id, result.problem_id, result.sample));
        continue;
      }
      lines.push_back(number);
      out.results.push_back(std::move(result));
    } catch (const result_error& e) {
      skip(e.what());
    }
  }
  if (in.bad()) throw io_error(file, "read failed");
  return out;
}

void append_result(const std::filesystem::path& file, const episode_result& result) {
  std::string line = to_json(result).dump() + "\n";
  std::lock_guard lock(append_mutex);
  int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw io_error(file, "cannot open for appending");
  const char* data = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      auto error = io_error(file, "write failed");
      ::close(fd);
      throw error;
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fdatasync(fd) != 0) {
    auto error = io_error(file, "flush to disk failed");
    ::close(fd);
    throw error;
  }
  if (::close(fd) != 0) throw io_error(file, "close failed");
}

}  // namespace pk::metrics
