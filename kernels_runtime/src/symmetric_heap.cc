#include "kr/host/symmetric_heap.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "kr/host/error.h"

namespace kr::host {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw error(std::string("kr heap: ") + what + ": " + cudaGetErrorString(e));
}

/// The few driver calls the VMM backend needs, looked up through the runtime so that nothing links
/// libcuda directly (binaries then start, and report "no GPU", on machines without a driver).
struct driver_api {
  decltype(&cuGetErrorString) get_error_string = nullptr;
  decltype(&cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&cuMemCreate) create = nullptr;
  decltype(&cuMemAddressReserve) reserve = nullptr;
  decltype(&cuMemAddressFree) address_free = nullptr;
  decltype(&cuMemMap) map = nullptr;
  decltype(&cuMemUnmap) unmap = nullptr;
  decltype(&cuMemSetAccess) set_access = nullptr;
  decltype(&cuMemRelease) release = nullptr;
  decltype(&cuMemExportToShareableHandle) export_handle = nullptr;
  decltype(&cuMemImportFromShareableHandle) import_handle = nullptr;

  static const driver_api& get() {
    static const driver_api d = load();
    return d;
  }

 private:
  template <class F>
  static void bind(F& fn, const char* name) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    check(cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q), name);
    if (q != cudaDriverEntryPointSuccess || p == nullptr)
      throw error(std::string("kr heap: the driver has no ") + name + " (needs a CUDA 12+ driver)");
    fn = reinterpret_cast<F>(p);
  }
  static driver_api load() {
    driver_api d;
    bind(d.get_error_string, "cuGetErrorString");
    bind(d.granularity, "cuMemGetAllocationGranularity");
    bind(d.create, "cuMemCreate");
    bind(d.reserve, "cuMemAddressReserve");
    bind(d.address_free, "cuMemAddressFree");
    bind(d.map, "cuMemMap");
    bind(d.unmap, "cuMemUnmap");
    bind(d.set_access, "cuMemSetAccess");
    bind(d.release, "cuMemRelease");
    bind(d.export_handle, "cuMemExportToShareableHandle");
    bind(d.import_handle, "cuMemImportFromShareableHandle");
    return d;
  }
};

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* text = nullptr;
  if (driver_api::get().get_error_string(r, &text) != CUDA_SUCCESS || text == nullptr) text = "unknown error";
  throw error(std::string("kr heap: ") + what + ": " + text);
}

constexpr std::size_t control_bytes = (control_layout::bytes + 4095) / 4096 * 4096;

struct vmm_hello {  // what each rank tells the others next to its fd
  std::uint64_t block_bytes;
  std::int32_t pid;
};

template <class T>
std::span<const std::byte> as_bytes_of(const T& v) {
  return {reinterpret_cast<const std::byte*>(&v), sizeof(T)};
}

}  // namespace

symmetric_heap::symmetric_heap(int device, const std::string& session, int rank, int world, heap_options options)
    : options_(options),
      device_(device),
      layout_(control_bytes + options.bytes, control_bytes),
      rendezvous_(session, rank, world, options.timeout) {
  if (world > kr::max_world)
    throw error("kr heap: world of " + std::to_string(world) + " ranks, kr::max_world is " +
                std::to_string(kr::max_world));
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaFree(nullptr), "initialising the CUDA context");
  comm_.rank = rank;
  comm_.world = world;
  comm_.control_offset = 0;
  try {
    if (options_.backend == heap_backend::vmm)
      create_vmm();
    else
      create_legacy_ipc();
    rendezvous_.barrier();  // every rank has mapped every block
  } catch (...) {
    release();
    throw;
  }
}

void symmetric_heap::create_vmm() {
  const driver_api& d = driver_api::get();
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device_;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  std::size_t gran = 0;
  check(d.granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED), "cuMemGetAllocationGranularity");
  block_bytes_ = round_up(layout_.capacity(), gran);
  const int world = comm_.world, rank = comm_.rank;

  CUmemGenericAllocationHandle own{};
  check(d.create(&own, block_bytes_, &prop, 0), "cuMemCreate (is the GPU's memory full?)");
  own_handle_ = own;
  CUdeviceptr va = 0;
  check(d.reserve(&va, block_bytes_ * std::size_t(world), gran, 0, 0), "cuMemAddressReserve");
  reserved_ = va;
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device_;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  auto map_block = [&](int r, CUmemGenericAllocationHandle h) {
    const CUdeviceptr at = va + block_bytes_ * std::size_t(r);
    check(d.map(at, block_bytes_, 0, h, 0), "cuMemMap");
    comm_.base[r] = reinterpret_cast<char*>(at);  // from here on release() unmaps it
    check(d.set_access(at, block_bytes_, &access, 1), "cuMemSetAccess");
  };
  map_block(rank, own);
  // Zero the control region before any peer can learn where it is.
  check(cudaMemset(comm_.base[rank], 0, control_bytes), "cudaMemset of the signal pad");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after zeroing the signal pad");

  int fd = -1;
  check(d.export_handle(&fd, own, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), "cuMemExportToShareableHandle");
  const vmm_hello hello{block_bytes_, std::int32_t(::getpid())};
  std::vector<peer_message> got;
  try {
    got = rendezvous_.all_gather(as_bytes_of(hello), fd);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  // Map ranks in order; close every received fd whatever happens.
  std::exception_ptr failure;
  for (int r = 0; r < world; ++r) {
    if (r == rank) continue;
    peer_message& m = got[std::size_t(r)];
    if (!failure) try {
      vmm_hello theirs{};
      if (m.payload.size() != sizeof(theirs) || m.fd < 0)
        throw error("kr heap: rank " + std::to_string(r) + " sent no memory handle (mixed backends?)");
      std::memcpy(&theirs, m.payload.data(), sizeof(theirs));
      if (theirs.block_bytes != block_bytes_)
        throw error("kr heap: rank " + std::to_string(r) + " has a heap of " + std::to_string(theirs.block_bytes) +
                    " bytes, this rank " + std::to_string(block_bytes_) + "; create it with the same size everywhere");
      CUmemGenericAllocationHandle h{};
      check(d.import_handle(&h, reinterpret_cast<void*>(static_cast<std::uintptr_t>(m.fd)),
                            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
            "cuMemImportFromShareableHandle");
      try {
        map_block(r, h);
      } catch (...) {
        d.release(h);
        throw;
      }
      d.release(h);  // the mapping keeps the memory alive
    } catch (...) {
      failure = std::current_exception();
    }
    if (m.fd >= 0) ::close(m.fd);
    m.fd = -1;
  }
  if (failure) std::rethrow_exception(failure);
}

void symmetric_heap::create_legacy_ipc() {
  block_bytes_ = round_up(layout_.capacity(), std::size_t(2) << 20);
  const int world = comm_.world, rank = comm_.rank;
  check(cudaMalloc(&own_alloc_, block_bytes_), "cudaMalloc of the heap (is the GPU's memory full?)");
  comm_.base[rank] = static_cast<char*>(own_alloc_);
  check(cudaMemset(own_alloc_, 0, control_bytes), "cudaMemset of the signal pad");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after zeroing the signal pad");
  cudaIpcMemHandle_t handle{};
  check(cudaIpcGetMemHandle(&handle, own_alloc_), "cudaIpcGetMemHandle");
  struct hello {
    cudaIpcMemHandle_t handle;
    std::uint64_t block_bytes;
  } mine{handle, block_bytes_};
  auto got = rendezvous_.all_gather(as_bytes_of(mine));
  for (int r = 0; r < world; ++r) {
    if (r == rank) continue;
    hello theirs{};
    if (got[std::size_t(r)].payload.size() != sizeof(theirs))
      throw error("kr heap: rank " + std::to_string(r) + " sent no IPC handle (mixed backends?)");
    std::memcpy(&theirs, got[std::size_t(r)].payload.data(), sizeof(theirs));
    if (theirs.block_bytes != block_bytes_)
      throw error("kr heap: rank " + std::to_string(r) + " has a heap of a different size; use the same everywhere");
    void* p = nullptr;
    check(cudaIpcOpenMemHandle(&p, theirs.handle, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle");
    comm_.base[r] = static_cast<char*>(p);
  }
}

void* symmetric_heap::allocate(std::size_t bytes, std::size_t align) {
  return comm_.base[comm_.rank] + layout_.allocate(bytes, align);
}

void symmetric_heap::release() noexcept {
  cudaSetDevice(device_);
  cudaDeviceSynchronize();
  if (options_.backend == heap_backend::legacy_ipc) {
    for (int r = 0; r < comm_.world; ++r)
      if (r != comm_.rank && comm_.base[r] != nullptr) cudaIpcCloseMemHandle(comm_.base[r]);
    if (own_alloc_ != nullptr) cudaFree(own_alloc_);
    own_alloc_ = nullptr;
  } else if (reserved_ != 0 || own_handle_ != 0) {  // (nothing to do if the driver never loaded)
    const driver_api& d = driver_api::get();
    for (int r = 0; r < comm_.world; ++r)
      if (comm_.base[r] != nullptr) d.unmap(reinterpret_cast<CUdeviceptr>(comm_.base[r]), block_bytes_);
    if (own_handle_ != 0) d.release(own_handle_);
    if (reserved_ != 0) d.address_free(reserved_, block_bytes_ * std::size_t(comm_.world));
    reserved_ = 0;
    own_handle_ = 0;
  }
  for (auto& b : comm_.base) b = nullptr;
}

symmetric_heap::~symmetric_heap() {
  try {
    rendezvous_.barrier();  // no rank still runs kernels on the others' memory
  } catch (...) {
    // A peer that died cannot be waited for; our mappings are ours to drop anyway.
  }
  release();
}

}  // namespace kr::host
