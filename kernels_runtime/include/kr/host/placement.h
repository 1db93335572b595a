#pragma once
/// Which GPU each rank process runs on: rank r on GPU r % gpus. With as many GPUs as ranks that is
/// one rank per GPU, the setting kernels_runtime is built for. With fewer GPUs, several ranks share
/// one ("co-located"): they still reach each other's heaps through the same IPC / VMM handles (a
/// block of the same device needs no peer access), so every primitive computes what it computes
/// across GPUs. But the GPU time-slices the contexts of co-located ranks, so a wait for such a peer
/// lasts until the peer's next time slice (milliseconds): their timings mean nothing, and code
/// that spins for a peer must be bounded (kr::wait_geq traps after KR_WAIT_TIMEOUT_NS).
#include <string>

namespace kr::host {

class placement {
 public:
  /// Throws kr::host::error, naming the fix, unless 1 <= world <= kr::max_world and gpus >= 1.
  placement(int world, int gpus);

  int world() const { return world_; }
  int gpus() const { return gpus_; }
  /// GPUs that hold at least one rank.
  int devices_used() const { return world_ < gpus_ ? world_ : gpus_; }
  /// The GPU of `rank` (throws kr::host::error when rank is outside [0, world)).
  int device_of(int rank) const;
  /// Some GPU holds more than one rank.
  bool co_located() const { return world_ > gpus_; }
  /// One line for logs and tool output, e.g. "2 ranks on 1 GPU, co-located (...)".
  std::string describe() const;

 private:
  int world_;
  int gpus_;
};

}  // namespace kr::host
