#include "agent/run/pkb_tool/server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "agent/run/pkb_tool/commands.h"
#include "config/paths.h"

namespace pk::pkb {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

server::server(context ctx, fs::path socket_dir) : ctx_(std::move(ctx)), dir_(std::move(socket_dir)) {
  if (!ctx_.texts) ctx_.texts = std::make_shared<const tool_texts>(tool_texts::load(config::data_path("prompts"), command_names()));
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  const fs::path sock = socket_path();
  fs::remove(sock);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (sock.native().size() >= sizeof addr.sun_path)
    throw std::runtime_error(fmt::format("pkb socket path {} is longer than {} bytes; use a shorter --out",
                                         sock.string(), sizeof addr.sun_path - 1));
  std::strcpy(addr.sun_path, sock.c_str());
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 8) != 0 || ::pipe2(wake_fd_, O_CLOEXEC) != 0) {
    const std::string why = std::strerror(errno);
    if (listen_fd_ >= 0) ::close(listen_fd_);
    throw std::runtime_error(fmt::format("cannot listen on {}: {}", sock.string(), why));
  }
  ::chmod(sock.c_str(), 0777);  // the sandbox's user must be able to connect
  thread_ = std::jthread([this](std::stop_token st) { serve(st); });
}

server::~server() {
  thread_.request_stop();
  if (wake_fd_[1] >= 0) (void)!::write(wake_fd_[1], "x", 1);
  if (thread_.joinable()) thread_.join();
  for (int fd : {listen_fd_, wake_fd_[0], wake_fd_[1]})
    if (fd >= 0) ::close(fd);
  std::error_code ec;
  fs::remove(socket_path(), ec);
}

void server::serve(std::stop_token stop) {
  while (!stop.stop_requested()) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents || stop.stop_requested()) return;
    const int conn = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) continue;
    std::string line;
    reply r;
    if (!read_line(conn, line, max_request_bytes)) {
      r = {2, ctx_.texts->bad_request.render({{"unreadable", "1"}, {"reason", ""}})};
    } else {
      try {
        r = handle(decode_request(line), stop);
      } catch (const std::exception& e) {
        r = {2, ctx_.texts->bad_request.render({{"unreadable", ""}, {"reason", e.what()}})};
      }
    }
    write_all(conn, encode_reply(r));
    ::close(conn);
  }
}

void server::log(const json& line) {
  if (ctx_.log.empty()) return;
  std::lock_guard lock(log_mutex_);
  std::ofstream out(ctx_.log, std::ios::app);
  out << line.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
}

reply server::handle(const std::vector<std::string>& argv, std::stop_token stop) {
  ++requests_;
  const tool_texts& texts = *ctx_.texts;
  const std::string name = argv.empty() ? "help" : argv[0];
  const command* cmd = find_command(name);
  if (!cmd) return {2, texts.unknown_command.render({{"command", name}}) + usage_text(texts)};
  parsed_arguments parsed = parse_arguments(*cmd, argv, texts);
  if (parsed.error) return {2, *parsed.error};
  if (cmd->leases_gpus) return handle_leased(*cmd, name, std::move(parsed.args), stop);
  json unlogged;
  request req{name, std::move(parsed.args), {}, unlogged};
  return cmd->handle(ctx_, req);
}

reply server::handle_leased(const command& cmd, const std::string& name, std::vector<std::string> args,
                            std::stop_token stop) {
  const tool_texts& texts = *ctx_.texts;
  json entry = {{"command", name}, {"requested_at", epoch_seconds()}};
  const auto asked = std::chrono::steady_clock::now();
  scheduler::acquire_result got = ctx_.gpus->acquire(ctx_.holder, ctx_.eval.world, stop);
  if (!got) {
    entry["refused"] = std::string(scheduler::to_string(got.reason()));
    log(entry);
    return {3, texts.no_gpus.render({{"command", name},
                                     {"over_cap", got.reason() == scheduler::refusal::over_cap ? "1" : ""},
                                     {"reason", got.message()}})};
  }
  scheduler::lease& lease = got.value();
  entry["lease_start"] = epoch_seconds();
  entry["lease_wait_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
  entry["gpus"] = lease.gpus();

  request req{name, std::move(args), lease.gpus(), entry};
  reply r;
  try {
    r = cmd.handle(ctx_, req);
  } catch (const std::invalid_argument& e) {
    r = {2, texts.failed.render({{"command", name}, {"tool_fault", ""}, {"reason", e.what()}})};
  } catch (const std::exception& e) {
    r = {3, texts.failed.render({{"command", name}, {"tool_fault", "1"}, {"reason", e.what()}})};
  }
  entry["lease_end"] = epoch_seconds();
  lease.release();
  entry["exit"] = r.exit;
  entry["gpu_seconds_used"] = ctx_.gpus->usage_of(ctx_.holder).gpu_seconds;
  log(entry);
  return r;
}

}  // namespace pk::pkb
