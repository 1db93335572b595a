#include "agent/transcript.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

extern char** environ;

namespace pk::agent {
namespace {

llm::role role_from(const std::string& s) {
  if (s == "system") return llm::role::system;
  if (s == "assistant") return llm::role::assistant;
  if (s == "tool") return llm::role::tool;
  return llm::role::user;
}

llm::finish_reason finish_from(const std::string& s) {
  for (auto f : {llm::finish_reason::stop, llm::finish_reason::length, llm::finish_reason::tool_calls,
                 llm::finish_reason::content_filter})
    if (llm::to_string(f) == s) return f;
  return llm::finish_reason::other;
}

json to_json(const llm::tool_call& c) {
  json j = {{"id", c.id}, {"name", c.name}, {"arguments", c.arguments},
            {"arguments_text", c.arguments_text}};
  if (!c.arguments_valid()) j["arguments_error"] = c.arguments_error;
  return j;
}

llm::tool_call tool_call_from_json(const json& j) {
  return {j.at("id"), j.at("name"), j.value("arguments", json()), j.value("arguments_text", ""),
          j.value("arguments_error", "")};
}

std::vector<llm::tool_call> calls_from(const json& j) {
  std::vector<llm::tool_call> out;
  for (const auto& c : j) out.push_back(tool_call_from_json(c));
  return out;
}

bool looks_secret(std::string_view name) {
  auto ends = [&](std::string_view s) { return name.size() >= s.size() && name.substr(name.size() - s.size()) == s; };
  return ends("_KEY") || name.find("TOKEN") != std::string_view::npos ||
         name.find("SECRET") != std::string_view::npos || name.find("PASSWORD") != std::string_view::npos;
}

}  // namespace

json to_json(const llm::message& m) {
  json j = {{"role", llm::to_string(m.role)}, {"text", m.text}};
  if (!m.tool_calls.empty()) {
    j["tool_calls"] = json::array();
    for (const auto& c : m.tool_calls) j["tool_calls"].push_back(to_json(c));
  }
  if (!m.tool_call_id.empty()) j["tool_call_id"] = m.tool_call_id;
  if (!m.tool_name.empty()) j["tool_name"] = m.tool_name;
  if (m.is_error) j["is_error"] = true;
  if (!m.opaque.is_null()) j["opaque"] = m.opaque;
  return j;
}

llm::message message_from_json(const json& j) {
  llm::message m;
  m.role = role_from(j.at("role"));
  m.text = j.value("text", "");
  if (j.contains("tool_calls")) m.tool_calls = calls_from(j["tool_calls"]);
  m.tool_call_id = j.value("tool_call_id", "");
  m.tool_name = j.value("tool_name", "");
  m.is_error = j.value("is_error", false);
  m.opaque = j.value("opaque", json());
  return m;
}

json to_json(const llm::usage& u) {
  return {{"input", u.input}, {"cached_input", u.cached_input}, {"cache_write", u.cache_write},
          {"output", u.output}, {"reasoning", u.reasoning}};
}

llm::usage usage_from_json(const json& j) {
  return {j.value("input", 0), j.value("cached_input", 0), j.value("cache_write", 0),
          j.value("output", 0), j.value("reasoning", 0)};
}

json to_json(const llm::response& r) {
  json calls = json::array();
  for (const auto& c : r.tool_calls) calls.push_back(to_json(c));
  return {{"text", r.text},
          {"tool_calls", calls},
          {"finish", llm::to_string(r.finish)},
          {"finish_raw", r.finish_raw},
          {"usage", to_json(r.tokens)},
          {"cost_usd", r.cost_usd},
          {"model", r.model},
          {"latency_ms", r.latency.count()},
          {"retries", r.retries},
          {"opaque", r.opaque},
          {"raw", r.raw}};
}

llm::response response_from_json(const json& j) {
  llm::response r;
  r.text = j.value("text", "");
  if (j.contains("tool_calls")) r.tool_calls = calls_from(j["tool_calls"]);
  r.finish = finish_from(j.value("finish", "other"));
  r.finish_raw = j.value("finish_raw", "");
  r.tokens = usage_from_json(j.value("usage", json::object()));
  r.cost_usd = j.value("cost_usd", 0.0);
  r.model = j.value("model", "");
  r.latency = llm::millis(j.value("latency_ms", 0));
  r.retries = j.value("retries", 0);
  r.opaque = j.value("opaque", json());
  r.raw = j.value("raw", json());
  return r;
}

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
                                     bool fresh)
    : path_(file), secrets_(std::move(secrets)) {
  fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (fresh ? O_TRUNC : 0), 0644);
  if (fd_ < 0)
    throw std::runtime_error(fmt::format("{}: cannot open the transcript: {}", file.string(),
                                         std::strerror(errno)));
}

transcript_writer::~transcript_writer() {
  if (fd_ >= 0) ::close(fd_);
}

void transcript_writer::write(const json& event) {
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
    if (number == 1 || (t.header.is_null() && type == "header")) {
      if (type != "header" || e.value("format", "") != transcript_format) {
        t.problems.push_back({number, "the first line is not a pkagent transcript header"});
      } else if (e.value("version", 0) > transcript_version) {
        t.problems.push_back({number, fmt::format("format version {} is newer than this pkagent "
                                                  "reads ({}); update pkagent",
                                                  e.value("version", 0), transcript_version)});
      } else {
        t.header = e;
      }
    }
    try {
      if (type == "request" || type == "response" || type == "observation") {
        recorded_step& s = t.steps[e.at("step").get<int>()];
        (type == "request" ? s.request : type == "response" ? s.response : s.observation) = e;
      } else if (type == "outcome") {
        t.outcome = e;
      }
    } catch (const json::exception& err) {
      t.problems.push_back({number, fmt::format("a {} event without a valid \"step\": {}", type, err.what())});
      continue;
    }
    t.events.push_back(std::move(e));
  }
  return t;
}

}  // namespace pk::agent
