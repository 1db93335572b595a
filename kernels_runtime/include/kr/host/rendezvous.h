#pragma once
/// The rank processes of one machine meet over abstract Unix datagram sockets named after a
/// session key (the same random string on every rank, agreed through NCCL or torch), and pass
/// small messages and file descriptors (SCM_RIGHTS) to each other. This is how cuMem heap
/// handles, which are POSIX fds, reach the other processes.
#include <chrono>
#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace kr::host {

struct peer_message {
  std::vector<std::byte> payload;
  int fd = -1;  ///< a descriptor received from the peer (owned by the caller), or -1
};

class rendezvous {
 public:
  /// Binds this rank's socket. Throws kr::host::error for bad arguments or a name already taken.
  rendezvous(std::string session, int rank, int world,
             std::chrono::milliseconds timeout = std::chrono::seconds(60));
  ~rendezvous();
  rendezvous(const rendezvous&) = delete;
  rendezvous& operator=(const rendezvous&) = delete;

  /// Every rank contributes `payload` (at most 4 KiB) and optionally a descriptor (duplicated into
  /// each peer); returns one message per rank, result[rank] being this rank's own with fd = -1.
  /// Throws kr::host::error naming the missing ranks after the timeout.
  std::vector<peer_message> all_gather(std::span<const std::byte> payload, int fd = -1);

  /// Returns once every rank has called barrier() as many times as this one.
  void barrier() { all_gather({}); }

  int rank() const { return rank_; }
  int world() const { return world_; }

 private:
  void send_to(int dst, std::uint32_t round, std::span<const std::byte> payload, int fd);
  bool receive_one(std::chrono::steady_clock::time_point deadline);

  std::string session_;
  int rank_, world_;
  std::chrono::milliseconds timeout_;
  int sock_ = -1;
  std::uint32_t round_ = 0;
  std::map<std::pair<std::uint32_t, int>, peer_message> inbox_;  // (round, src) -> message
};

}  // namespace kr::host
