"""torch + NCCL all_reduce on every visible GPU under the multicast guard, with cuBLAS and Triton
on the way, and what each rank's process sees of the guard: the multicast attribute reads 0 and
cudart's entry point for cuMulticastCreate is the guard's refusal (compared as a pointer; no
multicast function is ever called). Prints one "rank R ..." line per rank; exits 0 when every
rank's checks held.
"""
import ctypes
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def triton_check():
    try:
        import triton
        import triton.language as tl
    except ImportError as e:
        return f"skip({e.name})"

    @triton.jit
    def add_one(x_ptr, n, block: tl.constexpr):
        offsets = tl.program_id(0) * block + tl.arange(0, block)
        mask = offsets < n
        tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1, mask=mask)

    try:
        x = torch.zeros(1000, device="cuda")
        add_one[(4,)](x, x.numel(), block=256)
        return "ok" if bool((x == 1).all()) else "wrong"
    except Exception as e:  # reported, not raised: the other checks still run and print
        return "error(" + f"{type(e).__name__}: {e}".replace(" ", "_")[:300] + ")"


def guard_view(rank):
    libcuda = ctypes.CDLL("libcuda.so.1")
    device, value = ctypes.c_int(), ctypes.c_int(-1)
    libcuda.cuDeviceGet(ctypes.byref(device), rank)
    libcuda.cuDeviceGetAttribute(ctypes.byref(value), 132, device)  # CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED
    with open("/proc/self/maps") as maps:
        runtimes = sorted({line.split()[-1] for line in maps if "libcudart.so" in line})
    entry = "no-cudart"
    if runtimes:
        pointer, status = ctypes.c_void_p(), ctypes.c_int(-1)
        ctypes.CDLL(runtimes[0]).cudaGetDriverEntryPointByVersion(
            b"cuMulticastCreate", ctypes.byref(pointer), 12010, 0, ctypes.byref(status))
        guard = ctypes.cast(ctypes.CDLL(None).cuMulticastCreate, ctypes.c_void_p).value
        entry = "guard" if pointer.value == guard else f"not-the-guard({pointer.value})"
    return value.value, entry


def rank_main(rank, world, port, results):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    x = torch.full((1 << 20,), float(rank + 1), device="cuda")
    dist.all_reduce(x)
    all_reduce = "ok" if bool((x == world * (world + 1) / 2).all()) else "wrong"
    a = torch.randn(512, 512, device="cuda")
    blas = "ok" if torch.allclose(a @ torch.eye(512, device="cuda"), a) else "wrong"
    triton = triton_check()
    attribute, entry = guard_view(rank)
    dist.barrier()
    dist.destroy_process_group()
    results.put(f"rank {rank} all_reduce={all_reduce} cublas={blas} triton={triton} "
                f"multicast_attribute={attribute} cudart_cuMulticastCreate={entry}")


def main():
    world = torch.cuda.device_count()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    results = mp.get_context("spawn").SimpleQueue()
    mp.spawn(rank_main, args=(world, port, results), nprocs=world)
    lines = sorted(results.get() for _ in range(world))
    print("\n".join(lines))
    good = all("all_reduce=ok cublas=ok triton=ok multicast_attribute=0 cudart_cuMulticastCreate=guard" in l
               for l in lines)
    print(f"world {world}")
    return 0 if good and world >= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
