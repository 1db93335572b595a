"""Inputs for 73_vocab_parallel_cross_entropy_loss: per rank standard-normal logits (B, S, V/W) of its vocabulary
slice, the target ids (B, S), uniform over the V tokens and the same on every rank (PKB: the fixed pattern
(13 i + 7 + trial) mod V of the token index i; here drawn from the shared stream, so they change with the seed
too), and group None (the default group). V must be a multiple of W."""

import torch


def make_inputs(ctx, B, S, V):
    if V % ctx.world:
        raise ValueError(f"73_vocab_parallel_cross_entropy_loss: the vocabulary V={V} does not split over W={ctx.world}")
    logits = ctx.randn((B, S, V // ctx.world), "logits")
    target = ctx.randint((B, S), "target", 0, V, same_on="world")
    return (logits, target, None)
