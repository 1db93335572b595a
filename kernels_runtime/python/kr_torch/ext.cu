// The torch extension behind kr_torch: symmetric heaps as torch tensors, and the kernels_runtime
// collectives launched on torch's current stream. Built on first use by kr_torch/__init__.py.
#include <ATen/cuda/CUDAContext.h>
#include <torch/extension.h>

#include <memory>
#include <vector>

#include "kr/host/symmetric_heap.h"
#include "kr/kr.cuh"

namespace {

std::vector<std::unique_ptr<kr::host::symmetric_heap>>& heaps() {
  static std::vector<std::unique_ptr<kr::host::symmetric_heap>> h;
  return h;
}

kr::host::symmetric_heap& heap(int64_t id) {
  TORCH_CHECK(id >= 0 && std::size_t(id) < heaps().size() && heaps()[std::size_t(id)],
              "kr_torch: heap ", id, " does not exist (closed already?)");
  return *heaps()[std::size_t(id)];
}

int64_t create_heap(int64_t device, const std::string& session, int64_t rank, int64_t world, int64_t bytes,
                    const std::string& backend, double timeout_s) {
  kr::host::heap_options opt;
  opt.bytes = std::size_t(bytes);
  TORCH_CHECK(backend == "vmm" || backend == "legacy_ipc", "kr_torch: backend must be 'vmm' or 'legacy_ipc', not '",
              backend, "'");
  opt.backend = backend == "vmm" ? kr::host::heap_backend::vmm : kr::host::heap_backend::legacy_ipc;
  opt.timeout = std::chrono::milliseconds(int64_t(timeout_s * 1000));
  try {
    heaps().push_back(std::make_unique<kr::host::symmetric_heap>(int(device), session, int(rank), int(world), opt));
  } catch (const std::exception& e) {
    TORCH_CHECK(false, e.what());
  }
  return int64_t(heaps().size() - 1);
}

void close_heap(int64_t id) {
  heap(id);  // checks the id
  heaps()[std::size_t(id)].reset();
}

torch::Tensor heap_tensor(int64_t id, std::vector<int64_t> shape, at::ScalarType dtype) {
  auto& h = heap(id);
  int64_t numel = 1;
  for (auto d : shape) numel *= d;
  void* p = nullptr;
  try {
    p = h.allocate(std::size_t(numel) * c10::elementSize(dtype), 256);
  } catch (const std::exception& e) {
    TORCH_CHECK(false, e.what());
  }
  int device = 0;
  cudaGetDevice(&device);
  return torch::from_blob(p, shape, [](void*) {}, torch::TensorOptions().dtype(dtype).device(torch::kCUDA, device));
}

int64_t peer_ptr(int64_t id, const torch::Tensor& t, int64_t r) {
  auto& h = heap(id);
  TORCH_CHECK(r >= 0 && r < h.world(), "kr_torch: rank ", r, " outside a world of ", h.world());
  const auto& c = h.comm();
  const char* p = static_cast<const char*>(t.data_ptr());
  TORCH_CHECK(p >= c.base[c.rank] && p < c.base[c.rank] + h.capacity(),
              "kr_torch: the tensor is not in this symmetric heap");
  return int64_t(reinterpret_cast<std::uintptr_t>(c.peer(p, int(r))));
}

torch::Tensor comm_bytes(int64_t id) {
  const kr::comm& c = heap(id).comm();
  auto t = torch::empty({int64_t(sizeof(kr::comm))}, torch::kUInt8);
  std::memcpy(t.data_ptr(), &c, sizeof(c));
  return t;
}

cudaStream_t stream() { return at::cuda::getCurrentCUDAStream().stream(); }

void ok(cudaError_t e, const char* what) { TORCH_CHECK(e == cudaSuccess, "kr_torch: ", what, ": ", cudaGetErrorString(e)); }

void check_dense(const torch::Tensor& t, const char* name) {
  TORCH_CHECK(t.is_cuda() && t.is_contiguous(), "kr_torch: ", name, " must be a contiguous CUDA tensor");
}

template <class F>
void by_dtype(at::ScalarType s, F&& f) {
  if (s == at::kBFloat16)
    f(__nv_bfloat16{});
  else if (s == at::kHalf)
    f(__half{});
  else if (s == at::kFloat)
    f(float{});
  else
    TORCH_CHECK(false, "kr_torch: reductions support bfloat16, float16 and float32, not ", s);
}

void all_reduce(int64_t id, const torch::Tensor& in, torch::Tensor& out, const std::string& algo) {
  check_dense(in, "in");
  check_dense(out, "out");
  TORCH_CHECK(in.numel() == out.numel() && in.scalar_type() == out.scalar_type(), "kr_torch.all_reduce: in and out differ");
  const auto a = algo == "two_shot" ? kr::all_reduce_algo::two_shot : kr::all_reduce_algo::one_shot;
  by_dtype(in.scalar_type(), [&](auto z) {
    using T = decltype(z);
    ok(kr::all_reduce(heap(id).comm(), static_cast<const T*>(in.data_ptr()), static_cast<T*>(out.data_ptr()),
                      std::size_t(in.numel()), stream(), a),
       "all_reduce");
  });
}

void reduce_scatter(int64_t id, const torch::Tensor& in, torch::Tensor& out) {
  check_dense(in, "in");
  check_dense(out, "out");
  TORCH_CHECK(in.numel() == out.numel() * heap(id).world(), "kr_torch.reduce_scatter: in must hold world * out.numel()");
  by_dtype(in.scalar_type(), [&](auto z) {
    using T = decltype(z);
    ok(kr::reduce_scatter(heap(id).comm(), static_cast<const T*>(in.data_ptr()), static_cast<T*>(out.data_ptr()),
                          std::size_t(out.numel()), stream()),
       "reduce_scatter");
  });
}

void reduce(int64_t id, const torch::Tensor& in, torch::Tensor& out, int64_t root) {
  check_dense(in, "in");
  check_dense(out, "out");
  by_dtype(in.scalar_type(), [&](auto z) {
    using T = decltype(z);
    ok(kr::reduce(heap(id).comm(), static_cast<const T*>(in.data_ptr()), static_cast<T*>(out.data_ptr()),
                  std::size_t(in.numel()), int(root), stream()),
       "reduce");
  });
}

void all_gather(int64_t id, const torch::Tensor& in, torch::Tensor& out) {
  check_dense(in, "in");
  check_dense(out, "out");
  TORCH_CHECK(out.nbytes() == in.nbytes() * heap(id).world(), "kr_torch.all_gather: out must hold world * in");
  ok(kr::all_gather(heap(id).comm(), in.data_ptr(), out.data_ptr(), in.nbytes(), stream()), "all_gather");
}

void all_to_all(int64_t id, const torch::Tensor& in, torch::Tensor& out) {
  check_dense(in, "in");
  check_dense(out, "out");
  TORCH_CHECK(out.nbytes() == in.nbytes(), "kr_torch.all_to_all: in and out differ in size");
  ok(kr::all_to_all(heap(id).comm(), in.data_ptr(), out.data_ptr(), in.nbytes() / heap(id).world(), stream()),
     "all_to_all");
}

/// broadcast / scatter / gather; `block_bytes` is one rank's block.
void rooted(int64_t id, const std::string& op, const torch::Tensor& in, torch::Tensor& out, int64_t block_bytes,
            int64_t root) {
  check_dense(in, "in");
  check_dense(out, "out");
  kr::rooted_op o = op == "broadcast" ? kr::rooted_op::broadcast
                    : op == "scatter" ? kr::rooted_op::scatter
                                      : kr::rooted_op::gather;
  TORCH_CHECK(op == "broadcast" || op == "scatter" || op == "gather", "kr_torch: unknown rooted op ", op);
  ok(kr::rooted_copy(heap(id).comm(), o, in.data_ptr(), out.data_ptr(), std::size_t(block_bytes), int(root), stream()),
     op.c_str());
}

void device_barrier(int64_t id, int64_t channel) { ok(kr::barrier(heap(id).comm(), stream(), int(channel)), "barrier"); }

void host_barrier(int64_t id) {
  try {
    heap(id).barrier();
  } catch (const std::exception& e) {
    TORCH_CHECK(false, e.what());
  }
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("create_heap", &create_heap);
  m.def("close_heap", &close_heap);
  m.def("heap_tensor", &heap_tensor);
  m.def("peer_ptr", &peer_ptr);
  m.def("comm_bytes", &comm_bytes);
  m.def("all_reduce", &all_reduce);
  m.def("reduce_scatter", &reduce_scatter);
  m.def("reduce", &reduce);
  m.def("all_gather", &all_gather);
  m.def("all_to_all", &all_to_all);
  m.def("rooted", &rooted);
  m.def("device_barrier", &device_barrier);
  m.def("host_barrier", &host_barrier);
}
