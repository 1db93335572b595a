#pragma once
/// kernels_runtime: multi-GPU primitives for kernels that move data over NVLink themselves.
/// Peer pointers (types/comm.cuh), signals and barriers (ops/sync.cuh, ops/barrier.cuh), 16-byte
/// peer loads and stores (ops/vec.cuh), TMA bulk copies (ops/tma.cuh), and collectives built from
/// them (collectives/). No multicast anywhere. Guide: docs/kernels_runtime.md.
#include "collectives/collectives.cuh"
#include "ops/ops.cuh"
#include "types/types.cuh"
