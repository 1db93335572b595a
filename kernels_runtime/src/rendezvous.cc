#include "kr/host/rendezvous.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <thread>

#include "kr/host/error.h"

namespace kr::host {
namespace {

constexpr std::uint32_t magic = 0x6b72726eu;  // "krrn"
constexpr std::size_t max_payload = 4096;

struct header {
  std::uint32_t magic;
  std::int32_t src;
  std::uint32_t round;
  std::uint32_t len;
};

std::string errno_text() { return std::strerror(errno); }

/// Abstract socket address (Linux): a leading NUL, then the name; not a file, gone with the socket.
socklen_t make_address(const std::string& session, int rank, sockaddr_un& addr) {
  const std::string name = "kr/" + session + "/" + std::to_string(rank);
  if (name.size() + 1 > sizeof(addr.sun_path))
    throw error("kr rendezvous: session key '" + session + "' is too long (at most " +
                std::to_string(sizeof(addr.sun_path) - 16) + " characters)");
  std::memset(&addr, 0, sizeof(addr));
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  return socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name.size());
}

}  // namespace

rendezvous::rendezvous(std::string session, int rank, int world, std::chrono::milliseconds timeout)
    : session_(std::move(session)), rank_(rank), world_(world), timeout_(timeout) {
  if (world < 1 || rank < 0 || rank >= world)
    throw error("kr rendezvous: rank " + std::to_string(rank) + " is outside a world of " + std::to_string(world));
  if (session_.empty()) throw error("kr rendezvous: empty session key; give every rank the same random key");
  sock_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock_ < 0) throw error("kr rendezvous: socket(AF_UNIX): " + errno_text());
  sockaddr_un addr;
  const socklen_t len = make_address(session_, rank_, addr);
  if (::bind(sock_, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    const std::string why = errno_text();
    ::close(sock_);
    throw error("kr rendezvous: cannot bind the socket of rank " + std::to_string(rank_) + " in session '" +
                session_ + "': " + why + " (is another process using the same session key and rank?)");
  }
}

rendezvous::~rendezvous() {
  if (sock_ >= 0) ::close(sock_);
  for (auto& [key, msg] : inbox_)
    if (msg.fd >= 0) ::close(msg.fd);
}

void rendezvous::send_to(int dst, std::uint32_t round, std::span<const std::byte> payload, int fd) {
  sockaddr_un addr;
  const socklen_t addr_len = make_address(session_, dst, addr);
  header h{magic, rank_, round, std::uint32_t(payload.size())};
  iovec iov[2] = {{&h, sizeof(h)}, {const_cast<std::byte*>(payload.data()), payload.size()}};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_name = &addr;
  msg.msg_namelen = addr_len;
  msg.msg_iov = iov;
  msg.msg_iovlen = payload.empty() ? 1 : 2;
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (::sendmsg(sock_, &msg, MSG_NOSIGNAL) < 0) {
    // The peer may not have bound its socket yet: retry until the timeout.
    if ((errno == ECONNREFUSED || errno == ENOENT || errno == EINTR || errno == EAGAIN) &&
        std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    throw error("kr rendezvous: rank " + std::to_string(rank_) + " cannot reach rank " + std::to_string(dst) +
                " in session '" + session_ + "': " + errno_text() +
                " (did every rank start with the same session key and world size?)");
  }
}

bool rendezvous::receive_one(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  pollfd p{sock_, POLLIN, 0};
  const int ready = ::poll(&p, 1, int(std::max<std::int64_t>(0, left.count())));
  if (ready < 0 && errno == EINTR) return true;
  if (ready < 0) throw error("kr rendezvous: poll: " + errno_text());
  if (ready == 0) return false;
  header h{};
  std::vector<std::byte> buf(max_payload);
  iovec iov[2] = {{&h, sizeof(h)}, {buf.data(), buf.size()}};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = 2;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  const ssize_t n = ::recvmsg(sock_, &msg, MSG_CMSG_CLOEXEC);
  if (n < 0) throw error("kr rendezvous: recvmsg: " + errno_text());
  int fd = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
  if (std::size_t(n) < sizeof(h) || h.magic != magic || h.src < 0 || h.src >= world_ ||
      std::size_t(n) != sizeof(h) + h.len) {
    if (fd >= 0) ::close(fd);
    return true;  // not ours (or truncated): drop it
  }
  buf.resize(h.len);
  auto& slot = inbox_[{h.round, h.src}];
  if (slot.fd >= 0) ::close(slot.fd);
  slot = peer_message{std::move(buf), fd};
  return true;
}

std::vector<peer_message> rendezvous::all_gather(std::span<const std::byte> payload, int fd) {
  if (payload.size() > max_payload)
    throw error("kr rendezvous: payload of " + std::to_string(payload.size()) + " bytes, at most " +
                std::to_string(max_payload));
  const std::uint32_t round = round_++;
  for (int k = 1; k < world_; ++k) send_to((rank_ + k) % world_, round, payload, fd);
  std::vector<peer_message> out(static_cast<std::size_t>(world_));
  out[std::size_t(rank_)].payload.assign(payload.begin(), payload.end());
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  int missing = world_ - 1;
  while (missing > 0) {
    for (int r = 0; r < world_; ++r) {
      auto it = inbox_.find({round, r});
      if (it == inbox_.end()) continue;
      out[std::size_t(r)] = std::move(it->second);
      inbox_.erase(it);
      --missing;
    }
    if (missing == 0) break;
    if (!receive_one(deadline)) {
      std::string who;
      for (int r = 0; r < world_; ++r)
        if (r != rank_ && out[std::size_t(r)].payload.empty() && out[std::size_t(r)].fd < 0 &&
            !inbox_.contains({round, r}))
          who += (who.empty() ? "" : ", ") + std::to_string(r);
      for (auto& m : out)
        if (m.fd >= 0) ::close(m.fd);
      throw error("kr rendezvous: rank " + std::to_string(rank_) + " timed out after " +
                  std::to_string(timeout_.count()) + " ms waiting for rank(s) " + who + " in session '" + session_ +
                  "'");
    }
  }
  return out;
}

}  // namespace kr::host
