#include "agent/run/pkb_tool/protocol.h"

#include <unistd.h>

#include <cerrno>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace pk::pkb {

using json = nlohmann::json;

std::string encode_request(const std::vector<std::string>& argv) {
  return json{{"argv", argv}}.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::vector<std::string> decode_request(std::string_view line) {
  const json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("argv") || !j["argv"].is_array())
    throw std::runtime_error("the request is not a JSON object with an \"argv\" array");
  std::vector<std::string> argv;
  for (const json& a : j["argv"]) {
    if (!a.is_string()) throw std::runtime_error("every element of \"argv\" must be a string");
    argv.push_back(a.get<std::string>());
  }
  return argv;
}

std::string encode_reply(const reply& r) {
  return json{{"exit", r.exit}, {"output", r.output}}.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

reply decode_reply(std::string_view line) {
  const json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("exit") || !j["exit"].is_number_integer())
    throw std::runtime_error("the server's reply is not a JSON object with an integer \"exit\"");
  return {j["exit"].get<int>(), j.value("output", std::string())};
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool read_line(int fd, std::string& line, std::size_t cap) {
  line.clear();
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    line.append(buf, static_cast<std::size_t>(n));
    if (const auto nl = line.find('\n'); nl != std::string::npos) {
      line.resize(nl);
      return true;
    }
    if (line.size() > cap) return false;
  }
}

}  // namespace pk::pkb
