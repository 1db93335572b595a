"""Inputs for 21_clip_grad_norm_no_ep: per rank a list of three standard-normal (M, N) gradients (different on
every rank, trial and seed), max_norm 1.0, norm_type 2.0 and the WORLD group, as PKB passes it (with None the
reference reduces nothing)."""


def make_inputs(ctx, M, N):
    grads = [ctx.randn((M, N), f"grad{i}") for i in range(3)]
    return (grads, 1.0, 2.0, ctx.groups["world"])
