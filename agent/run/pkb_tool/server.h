// The server side of `pkb`: one thread of pkagent per episode, listening on a Unix socket that
// the episode's sandbox sees at /run/pkb/pkb.sock. Each request leases the problem's GPUs from
// the scheduler for its own duration only (so an episode waiting for its model holds no GPU),
// runs in a fresh sandbox or evaluation, and answers with text shaped for the model.
//
//   pkb_server srv(ctx, episode_dir / "pkb");   // listening from here on
//   spec.binds.push_back({srv.socket_dir(), "/run/pkb"});
//   ... run the episode ...
//   // the destructor stops the thread; leases never outlive a request
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/run/pkb_tool/protocol.h"
#include "agent/run/pkb_tool/request.h"

namespace pk::pkb {

struct command;

class server {
 public:
  /// Creates `socket_dir` (mode 0755) and the socket in it, and starts serving. Loads the
  /// installed prompts/pkb/ when ctx.texts is null. Throws std::runtime_error when the socket
  /// cannot be created, agent::template_error when the texts cannot be loaded.
  server(context ctx, std::filesystem::path socket_dir);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  const std::filesystem::path& socket_dir() const { return dir_; }
  std::filesystem::path socket_path() const { return dir_ / std::string(socket_name); }
  /// Requests answered so far.
  int requests() const { return requests_.load(); }

  /// Answers one request (also used directly by tests); never throws for bad input.
  reply handle(const std::vector<std::string>& argv, std::stop_token stop = {});

 private:
  void serve(std::stop_token stop);
  /// Runs a command that leases GPUs: waits for the lease, runs the handler under it, logs the
  /// request to pkb.jsonl and ends the lease.
  reply handle_leased(const command& cmd, const std::string& name, std::vector<std::string> args,
                      std::stop_token stop);
  void log(const nlohmann::json& line);

  context ctx_;
  std::filesystem::path dir_;
  int listen_fd_ = -1;
  int wake_fd_[2] = {-1, -1};
  std::atomic<int> requests_{0};
  std::mutex log_mutex_;
  std::jthread thread_;
};

}  // namespace pk::pkb
