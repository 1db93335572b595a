"""Inputs for 86_tp_muon_orthogonalization, sized as PKB's: with C rounded up to a multiple of W, per rank
x (R, C/W) standard normal in bf16, different on every rank, trial and seed (PKB also adds 0.01 * rank, which
only made the ranks' blocks differ: ours differ by their seeds), and 5 steps. The coefficient schedule
("quintic"), the partition dimension (1) and the group (None) are solution()'s defaults, as PKB passes them."""

import torch


def make_inputs(ctx, R, C):
    cols = -(-C // ctx.world) * ctx.world
    return (ctx.randn((R, cols // ctx.world), "x", dtype=torch.bfloat16), 5)
