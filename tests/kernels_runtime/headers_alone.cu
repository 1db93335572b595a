// Compiled by ctest with nothing but -I kernels_runtime/include: a candidate needs no library to
// use the device side. Instantiates every collective so that template errors surface here.
#include <kr/kr.cuh>

using bf16 = __nv_bfloat16;

template cudaError_t kr::all_reduce<bf16>(const kr::comm&, const bf16*, bf16*, std::size_t, cudaStream_t,
                                          kr::all_reduce_algo, kr::launch_params);
template cudaError_t kr::all_reduce<float>(const kr::comm&, const float*, float*, std::size_t, cudaStream_t,
                                           kr::all_reduce_algo, kr::launch_params);
template cudaError_t kr::all_reduce<__half>(const kr::comm&, const __half*, __half*, std::size_t, cudaStream_t,
                                            kr::all_reduce_algo, kr::launch_params);
template cudaError_t kr::reduce_scatter<bf16>(const kr::comm&, const bf16*, bf16*, std::size_t, cudaStream_t,
                                              kr::launch_params);
template cudaError_t kr::reduce<float>(const kr::comm&, const float*, float*, std::size_t, int, cudaStream_t,
                                       kr::launch_params);
template cudaError_t kr::all_reduce_push<bf16>(const kr::comm&, const bf16*, bf16*, bf16*, std::size_t, cudaStream_t,
                                               kr::launch_params);
template cudaError_t kr::ce_all_reduce<bf16>(const kr::comm&, const kr::copy_engines&, const bf16*, bf16*, bf16*,
                                             std::size_t, cudaStream_t, std::size_t, int, int);

__global__ void uses_every_device_primitive(kr::comm c, float* x) {
  __shared__ kr::mbarrier bar;
  __shared__ alignas(128) float stage[256];
  if (threadIdx.x == 0) {
    kr::mbarrier_init(&bar);
    kr::bulk_expect(&bar, sizeof(stage));
    kr::bulk_load(stage, c.peer(x, (c.rank + 1) % c.world), sizeof(stage), &bar);
  }
  __syncthreads();
  kr::bulk_wait(&bar, 0);
  if (threadIdx.x == 0) {
    kr::bulk_store(x, stage, sizeof(stage));
    kr::bulk_commit();
    kr::bulk_wait_all();
    kr::signal_add(c.slot((c.rank + 1) % c.world, 1, c.rank, 0));
    kr::wait_geq(c.slot(c.rank, 1, (c.rank + 1) % c.world, 0), 1);
  }
  kr::block_barrier(c, 2);
  kr::grid_barrier(c, 3);
  kr::st_v4(x, kr::ld_v4(c.peer(x, 0)));
}

int host_side(const kr::comm& c, void* in, void* out, cudaStream_t s) {
  kr::copy_engines ce(c.world);
  return int(kr::all_gather(c, in, out, 4096, s)) + int(kr::all_to_all(c, in, out, 4096, s)) +
         int(kr::ce_all_gather(c, ce, in, out, 4096, s)) + int(kr::ce_all_to_all(c, ce, in, out, 4096, s)) +
         int(kr::rooted_copy(c, kr::rooted_op::scatter, in, out, 4096, 0, s)) + int(kr::barrier(c, s));
}
