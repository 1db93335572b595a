#include "kr/host/nccl_session.h"

#include <array>
#include <cstring>

#include "kr/host/error.h"
#include "kr/host/session_key.h"

namespace kr::host {

std::string session_key_from_nccl(ncclComm_t comm, cudaStream_t stream) {
  int rank = 0;
  if (ncclCommUserRank(comm, &rank) != ncclSuccess) throw error("kr: ncclCommUserRank failed");
  std::array<char, 64> key{};
  if (rank == 0) {
    const std::string k = random_session_key();
    std::memcpy(key.data(), k.data(), std::min(k.size(), key.size() - 1));
  }
  char* dev = nullptr;
  auto check = [](cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw error(std::string("kr session key: ") + what + ": " + cudaGetErrorString(e));
  };
  check(cudaMallocAsync(reinterpret_cast<void**>(&dev), key.size(), stream), "cudaMallocAsync");
  check(cudaMemcpyAsync(dev, key.data(), key.size(), cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
  const ncclResult_t r = ncclBroadcast(dev, dev, key.size(), ncclChar, 0, comm, stream);
  if (r != ncclSuccess) throw error(std::string("kr session key: ncclBroadcast: ") + ncclGetErrorString(r));
  check(cudaMemcpyAsync(key.data(), dev, key.size(), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaFreeAsync(dev, stream), "cudaFreeAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  key.back() = '\0';
  return std::string(key.data());
}

}  // namespace kr::host
