#include "agent/run/pkb_binding.h"

#include <cstdlib>

#include "agent/run/pkb_tool/python_env.h"

namespace pk::run {

void attach_pkb(sandbox::spec& s, const pkb::server& srv, const std::filesystem::path& pkb_binary) {
  const char* host_path = std::getenv("PATH");
  const std::string path = host_path && *host_path ? host_path : "/usr/local/bin:/usr/bin:/bin";
  if (s.isolation == sandbox::isolation::none) {
    // Nothing is bound without bwrap: point the client at the real socket and binary.
    s.env[std::string(pkb::socket_env)] = srv.socket_path().string();
    s.env["PATH"] = pkb_binary.parent_path().string() + ":" + path;
  } else {
    s.env["PATH"] = std::string(pkb::bin_dir_inside) + ":" + path;
    s.binds.push_back({srv.socket_dir(), std::string(pkb::socket_dir_inside), false});
    s.binds.push_back({pkb_binary, std::string(pkb::bin_dir_inside) + "/pkb", false});
  }
  pkb::add_python(s);  // python3 in the shell is the evaluator's, with torch
}

}  // namespace pk::run
