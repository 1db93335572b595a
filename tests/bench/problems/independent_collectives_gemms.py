"""The independent computations of the plain collectives and the GEMM problems: 1-8 (all-reduce, all-gather,
broadcast, reduce, scatter, gather, reduce-scatter, all-to-all, as sums and stacks of the ranks' tensors),
11-16 and 46 (GEMMs and GEMVs with the reduction or gather fused in: the whole product from every rank's
slices), 17 (rotary embedding then all-gather), and the quantized collectives 19, 20, 44, 52 and 53 (blocked
FP8 quantize and dequantize, int8 gradient mean, FP8 delayed scaling), each quantization written out step by
step.
"""

import torch

from float64 import f64, total


def collectives(name, args, W):
    first = [a[0] for a in args]
    if name == "1_allreduce":
        return [total(first)] * W
    if name == "2_allgather":
        return [torch.stack([f64(t) for t in first])] * W
    if name == "3_broadcast":
        return [f64(first[0])] * W  # src defaults to 0
    if name == "4_reduce":
        dst = args[0][1]
        return [total(first) if r == dst else f64(first[r]) for r in range(W)]
    if name == "5_scatter":
        return [f64(first[0][r]) for r in range(W)]  # src defaults to 0
    if name == "6_gather":
        return [torch.stack([f64(t) for t in first]) if r == 0 else f64(first[r]) for r in range(W)]
    if name == "7_reducescatter":
        return list(total(first).chunk(W, dim=0))
    if name == "8_alltoall":
        return [torch.stack([f64(first[s][r]) for s in range(W)]) for r in range(W)]
    return None


def allgather_gemm(args, W):
    """11, 12: the inner-dimension slices side by side, times each rank's own B."""
    A = torch.cat([f64(a[0]) for a in args], dim=1)
    return [A @ f64(args[r][1]) for r in range(W)]


def gemm(name, args, W):
    full = sum(f64(A) @ f64(B) for A, B in args)
    return [full] * W if name == "13_gemm_allreduce" else list(full.chunk(W, dim=0))


def gemm_allgather(args, W):
    return [torch.cat([f64(A) @ f64(B) for A, B in args], dim=1)] * W


def combined_sharded_gemms(args, W):
    x = torch.cat([f64(a[0]) for a in args], dim=1)
    rows = x.shape[0] // W
    outs = []
    for r, (_, W1, W2) in enumerate(args):
        hidden = torch.nn.functional.silu(x[r * rows:(r + 1) * rows] @ f64(W1))
        outs.append(hidden @ f64(W2))
    return outs


def gemv_decode(args, W):
    return [torch.cat([f64(h) @ f64(w).T + f64(b) for h, w, b in args], dim=1)] * W


def rope_allgather(args, W):
    def rotate(x, cos, sin):
        half = x.shape[-1] // 2
        turned = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos.unsqueeze(2) + turned * sin.unsqueeze(2)

    rotated = [[rotate(f64(a[i]), f64(a[2]), f64(a[3])) for i in (0, 1)] for a in args]
    return [tuple(torch.cat([q_k[i] for q_k in rotated], dim=1) for i in (0, 1))] * W


def fp8_quantize(args, W):
    codes, scales = [], []
    for x, block in args:
        blocks = f64(x).reshape(x.shape[0], -1, block)
        s = (blocks.abs().amax(dim=-1) / 448.0).to(torch.float32)
        safe = torch.where(s == 0, torch.ones_like(s), s)
        codes.append((blocks / f64(safe).unsqueeze(-1)).to(torch.float32).to(torch.float8_e4m3fn).reshape(x.shape))
        scales.append(s)
    return [(torch.cat(codes), torch.cat(scales))] * W


def fp8_dequantize(args, W):
    chunks = []
    for y, s, block in args:
        chunks.append((f64(y).reshape(-1, block) * f64(s).reshape(-1, 1)).view(y.shape))
    return [torch.stack([chunks[s][r] for s in range(W)]) for r in range(W)]


def int8_mean(args, W):
    total = 0
    for g, block in args:
        x = f64(g).reshape(-1)
        n = x.numel()
        blocks = torch.cat([x, x.new_zeros(-n % block)]).view(-1, block)
        scale = f64((blocks.abs().amax(dim=1).to(torch.float32).clamp(min=1e-8) / 127.0)).unsqueeze(1)
        total = total + ((blocks / scale).round().clamp(-127, 127) * scale).view(-1)[:n]
    return [(total / W).view(args[0][0].shape)] * W


def _fp8_delayed_scale(x, history):
    """52, 53: the rolled history with max|x| appended, and x through e4m3 at the scale it gives."""
    history = torch.cat([history[1:], x.abs().max().view(1).to(history.dtype)])
    scale = f64(history.max().to(torch.float32).clamp(min=1e-12) / 448.0)
    return (f64(x) / scale).to(torch.float8_e4m3fn).to(torch.float64) * scale, history


def fp8_collective(name, args, W):
    trips = [_fp8_delayed_scale(x, history) for x, history in args]
    if name == "52_fp8_reduce_scatter_grads":
        mean = sum(recon for recon, _ in trips) / W
        return [(chunk, f64(history)) for chunk, (_, history) in zip(mean.chunk(W), trips)]
    full = torch.cat([recon for recon, _ in trips])
    return [(full, f64(history)) for _, history in trips]
