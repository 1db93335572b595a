#pragma once
/// Bootstrap over an existing NCCL communicator: rank 0 draws a random session key and broadcasts
/// it, so the heap's rendezvous needs nothing but the communicator the program already has.
#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "kr/host/session_key.h"

namespace kr::host {

/// Collective over `comm` (enqueued on `stream`, synchronised before returning).
std::string session_key_from_nccl(ncclComm_t comm, cudaStream_t stream);


}  // namespace kr::host
