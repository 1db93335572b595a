#include "agent/transcript.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

extern char** environ;

namespace pk::agent {
namespace {

bool looks_secret(std::string_view name) {
  auto ends = [&](std::string_view s) { return name.size() >= s.size() && name.substr(name.size() - s.size()) == s; };
  return ends("_KEY") || name.find("TOKEN") != std::string_view::npos ||
         name.find("SECRET") != std::string_view::npos || name.find("PASSWORD") != std::string_view::npos;
}

bool known_type(const std::string& type) {
  for (const char* t : {"header", "request", "response", "observation", "evaluation", "outcome"})
    if (type == t) return true;
  return false;
}

}  // namespace

std::vector<secret> secrets_from_environment() {
  std::vector<secret> out;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = kv.substr(0, eq), value = kv.substr(eq + 1);
    if (looks_secret(name) && value.size() >= 8) out.push_back({std::string(name), std::string(value)});
  }
  return out;
}

transcript_writer::transcript_writer(const std::filesystem::path& file, std::vector<secret> secrets,
                                     bool fresh, double seconds_before)
    : path_(file), secrets_(std::move(secrets)), seconds_before_(seconds_before) {
  fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (fresh ? O_TRUNC : 0), 0644);
  if (fd_ < 0)
    throw std::runtime_error(fmt::format("{}: cannot open the transcript: {}", file.string(),
                                         std::strerror(errno)));
}

transcript_writer::~transcript_writer() {
  if (fd_ >= 0) ::close(fd_);
}

double transcript_writer::seconds() const {
  return seconds_before_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void transcript_writer::write(const transcript_event& event) {
  json line = to_json(event);
  line["t"] = std::round(seconds() * 1000) / 1000;
  write_line(line);
  if (observer_) observer_(line);
}

void transcript_writer::write_line(const json& event) {
  // Invalid UTF-8 from a command's output is replaced rather than refused.
  std::string line = event.dump(-1, ' ', false, json::error_handler_t::replace);
  for (const secret& s : secrets_) {
    for (auto pos = line.find(s.value); pos != std::string::npos; pos = line.find(s.value, pos))
      line.replace(pos, s.value.size(), fmt::format("[redacted ${}]", s.name));
  }
  line += '\n';
  // One write(2) per line: with O_APPEND a crash leaves whole lines plus at most one partial.
  std::size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw std::runtime_error(fmt::format("{}: cannot write the transcript: {}", path_.string(),
                                           std::strerror(errno)));
    done += static_cast<std::size_t>(n);
  }
  ::fdatasync(fd_);
}

int transcript_file::complete_steps() const {
  int n = 0;
  while (true) {
    auto it = steps.find(n + 1);
    if (it == steps.end() || it->second.response.is_null()) return n;
    ++n;
  }
}

double transcript_file::seconds() const {
  double last = 0;
  for (const json& e : events)
    if (e.contains("t") && e["t"].is_number()) last = std::max(last, e["t"].get<double>());
  return last;
}

std::vector<llm::response> transcript_file::responses(int n) const {
  std::vector<llm::response> out;
  for (int i = 1; i <= n; ++i) out.push_back(response_from_json(steps.at(i).response.at("response")));
  return out;
}

transcript_file read_transcript(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw std::runtime_error(fmt::format("{}: cannot open the transcript: {}", file.string(),
                                         std::strerror(errno)));
  transcript_file t;
  t.path = file;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    bool last_without_newline = in.eof();
    if (line.empty()) continue;
    json e;
    try {
      e = json::parse(line);
    } catch (const json::parse_error& err) {
      t.problems.push_back(
          {number, last_without_newline
                       ? fmt::format("truncated: the last line ends after {} bytes, mid-event (the "
                                     "writer stopped while writing it)", line.size())
                       : fmt::format("not valid JSON: {}", err.what())});
      continue;
    }
    if (!e.is_object() || !e.contains("type") || !e["type"].is_string()) {
      t.problems.push_back({number, "not an event: a JSON object with a \"type\" is expected"});
      continue;
    }
    const std::string type = e["type"];
    const bool first = number == 1 || (t.header.is_null() && type == "header");
    bool header_ok = first;
    if (first && (type != "header" || e.value("format", "") != transcript_format)) {
      t.problems.push_back({number, "the first line is not a pkagent transcript header"});
      header_ok = false;
    } else if (first && e.value("version", 0) > transcript_version) {
      t.problems.push_back({number, fmt::format("format version {} is newer than this pkagent "
                                                "reads ({}); update pkagent",
                                                e.value("version", 0), transcript_version)});
      header_ok = false;
    }
    // Every event of a known type must hold the fields its type requires.
    if (known_type(type) && !(first && !header_ok && type == "header")) {
      try {
        (void)event_from_json(e);
      } catch (const transcript_error& err) {
        t.problems.push_back({number, err.what()});
        continue;
      }
    }
    if (header_ok) t.header = e;
    if (type == "request" || type == "response" || type == "observation") {
      recorded_step& s = t.steps[e.at("step").get<int>()];
      (type == "request" ? s.request : type == "response" ? s.response : s.observation) = e;
    } else if (type == "outcome") {
      t.outcome = e;
    }
    t.events.push_back(std::move(e));
  }
  return t;
}

}  // namespace pk::agent
