"""Inputs for 69_gnn_negative_scoring, sized as PKB's: per rank P = clamp(M / W, 16, 1280) + rank % 3 positive
scores (P,) and Q = clamp(N, 100, 1000) negative scores per positive (P, Q), all standard normal (different on
every rank, trial and seed), and group None.

tie_keys gives the judge the keys of its tie-aware comparison: for every positive of every rank, in rank
order, the bf16 sigmoids of its own score followed by its negatives' (the values the reference sorts). It runs
in the reference's process set and gathers the other ranks' scores."""

import torch
import torch.distributed as dist


def make_inputs(ctx, M, N):
    positives = max(16, min(M // ctx.world, 1280)) + ctx.rank % 3
    negatives = max(100, min(N, 1000))
    return (ctx.randn((positives,), "pos"), ctx.randn((positives, negatives), "neg"), None)


def tie_keys(ctx, args, output):
    pos, neg, _ = args
    rows = [None] * ctx.world
    dist.all_gather_object(rows, torch.cat([pos.view(-1, 1), neg], dim=1).cpu())
    return torch.sigmoid(torch.cat(rows).to(pos.device))
