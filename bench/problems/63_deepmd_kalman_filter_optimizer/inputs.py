"""Inputs for 63_deepmd_kalman_filter_optimizer, as PKB builds them: per rank NB blocks of L weights, each with a
gradient H (L, 1) normal with std 0.01, weights (L, 1) standard normal and the covariance P = identity (L, L) (the
filter's initial state), all float64 and different on every rank; the prediction error (0-d, standard normal);
kalman_lambda 0.98 and kalman_nue 0.9987.

The step changes the weights by ~6e-4 and P by ~6e-6 beyond its 1 / lambda factor, below PKB's atol of 1e-2
(un-updated weights and P / lambda passed): problem.toml compares at float64 precision instead."""

import torch


def make_inputs(ctx, NB, L):
    H = [ctx.randn((L, 1), f"H{i}", std=0.01) for i in range(NB)]
    weights = [ctx.randn((L, 1), f"weights{i}") for i in range(NB)]
    P = [torch.eye(L, dtype=ctx.dtype, device=ctx.device) for _ in range(NB)]
    return (H, ctx.randn((), "error"), weights, P, 0.98, 0.9987)
