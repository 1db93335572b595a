// `pkb`: the agent's tool inside its sandbox. A thin client: it sends its arguments to the
// pkagent process over the episode's Unix socket, prints the answer and exits with its status.
// All the work (GPU leases, evaluation, sandboxes) happens on the server side.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "agent/run/pkb_tool/protocol.h"

int main(int argc, char** argv) {
  using namespace pk::pkb;
  std::vector<std::string> args(argv + 1, argv + argc);
  const char* env = std::getenv(std::string(socket_env).c_str());
  const std::string path = env && *env ? std::string(env) : std::string(socket_dir_inside) + "/" + std::string(socket_name);

  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    std::fprintf(stderr, "pkb: socket path %s is too long\n", path.c_str());
    return 2;
  }
  std::strcpy(addr.sun_path, path.c_str());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::fprintf(stderr, "pkb: cannot reach the pkagent tool server at %s (%s); pkb works only inside a "
                         "pkagent episode\n", path.c_str(), std::strerror(errno));
    return 2;
  }
  if (!write_all(fd, encode_request(args))) {
    std::fprintf(stderr, "pkb: the tool server closed the connection\n");
    return 2;
  }
  ::shutdown(fd, SHUT_WR);
  std::string line;
  if (!read_line(fd, line, 1u << 30) || line.empty()) {
    std::fprintf(stderr, "pkb: no answer from the tool server (did pkagent stop?)\n");
    return 2;
  }
  try {
    const reply r = decode_reply(line);
    std::fwrite(r.output.data(), 1, r.output.size(), r.exit == 0 ? stdout : stderr);
    return r.exit;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pkb: %s\n", e.what());
    return 2;
  }
}
