"""Inputs for 23_grad_acc_loss: per rank a mean loss uniform in [0.5, 4) (a cross-entropy is positive, so the
weighted sum does not cancel in bf16), its token count n_r, uniform in [1, T], and N = the sum of all ranks'
counts (the counts come from the stream every rank shares, so every rank knows N without communicating, as a
trainer does after counting its batch), then the gradients at the two outputs, the same on every rank:
grad_normalized_loss standard normal, grad_loss_sum normal with std 1e-3 (so that both terms of grad_loss
weigh about the same at n_r ~ T/2 = 512)."""

import torch


def make_inputs(ctx, T):
    counts = ctx.randint((ctx.world,), "valid_tokens", 1, T + 1, same_on="world")
    loss = ctx.rand((), "loss", low=0.5, high=4.0)
    grad_normalized_loss = ctx.randn((), "grad_normalized_loss", same_on="world")
    grad_loss_sum = ctx.randn((), "grad_loss_sum", same_on="world", std=1e-3)
    return (loss, counts[ctx.rank].clone(), counts.sum(), grad_normalized_loss, grad_loss_sum)
