// The wire format between the `pkb` client (inside the agent's sandbox) and its server (a thread
// of pkagent per episode): one JSON line each way over a Unix stream socket.
//
//   client -> server  {"argv": ["check"]}                      then half-close
//   server -> client  {"exit": 0, "output": "problem ... verdict: correct\n"}
//
// One request per connection. The socket lives in a directory of its own that the sandbox binds
// read-only at /run/pkb (connect() needs no write access to the mount), so the model can neither
// remove it nor plant another.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pk::pkb {

inline constexpr std::string_view socket_dir_inside = "/run/pkb";
inline constexpr std::string_view socket_name = "pkb.sock";
inline constexpr std::string_view bin_dir_inside = "/run/pkb-bin";
/// The environment variable that overrides where the client looks for the socket.
inline constexpr std::string_view socket_env = "PKB_SOCKET";
/// Longest request line the server reads.
inline constexpr std::size_t max_request_bytes = 64 * 1024;

struct reply {
  int exit = 0;
  std::string output;
};

std::string encode_request(const std::vector<std::string>& argv);
/// Throws std::runtime_error naming what is wrong with the line.
std::vector<std::string> decode_request(std::string_view line);
std::string encode_reply(const reply& r);
reply decode_reply(std::string_view line);

/// Writes all of `data` to `fd` (retrying short writes); false when the peer went away.
bool write_all(int fd, std::string_view data);
/// Reads up to a newline or EOF, at most `cap` bytes; false on a read error or overflow.
bool read_line(int fd, std::string& line, std::size_t cap);

}  // namespace pk::pkb
