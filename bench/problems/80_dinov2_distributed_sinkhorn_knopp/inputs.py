"""Inputs for 80_dinov2_distributed_sinkhorn_knopp, sized as PKB's: rank r holds B teacher scores over P
prototypes, float32 normal with standard deviation 0.01 (different on every rank, trial and seed), the
temperature 0.07, its sample count (B,) as an int64 tensor of one element, 3 iterations and group None."""

import torch


def make_inputs(ctx, B, P):
    scores = ctx.randn((B, P), "teacher_output", dtype=torch.float32, std=0.01)
    count = torch.full((1,), B, dtype=torch.int64, device=ctx.device)
    return (scores, 0.07, count, 3, None)
