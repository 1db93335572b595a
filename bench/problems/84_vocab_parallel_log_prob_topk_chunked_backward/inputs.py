"""Inputs for 84_vocab_parallel_log_prob_topk_chunked_backward: per rank standard-normal logits (B, S', V/W) of its
vocabulary slice, S' = S rounded up to a multiple of W (PKB: B = 2, S = 8, V = 256 at M = 1024); target ids (B, S')
uniform over the vocabulary and the same on every rank (from the shared stream; PKB: a fixed arithmetic pattern);
grad_output (B, S') standard normal and the same on every rank (PKB: a linspace from -1 to 1); tp_group None; top_k
10, top_p 0.9 and chunk_size = S'/4 rounded up to a multiple of W (at most S'), PKB's.

PKB raises the target's logit by 8: the target then holds over 90% of the top-k mass, top-p keeps it alone and
99.9% of the gradient entries are exactly 0. Here the rank that holds the target sets its logit to 4 + N(0, 0.25):
the target stays the largest or close to it (so it survives the filter), with ~40% of the kept mass, and top-p
keeps several tokens, so the gradient has ~8 non-zero entries per token that depend on the filter and on every
rank's slice."""

import torch


def make_inputs(ctx, B, S, V):
    if V % ctx.world:
        raise ValueError(f"84_vocab_parallel_log_prob_topk_chunked_backward: the vocabulary V={V} does not split "
                         f"over W={ctx.world}")
    S = -(-max(S, ctx.world) // ctx.world) * ctx.world
    part = V // ctx.world
    logits = ctx.randn((B, S, part), "logits", dtype=torch.float32)
    target = ctx.randint((B, S), "target", 0, V, same_on="world")
    columns = ctx.rank * part + torch.arange(part, device=ctx.device)
    lead = 4.0 + 0.5 * ctx.randn((B, S), "target_logit", dtype=torch.float32)
    logits = torch.where(columns == target.unsqueeze(-1), lead.unsqueeze(-1), logits)
    chunk_size = min(S, -(-max(ctx.world, S // 4) // ctx.world) * ctx.world)
    grad_output = ctx.randn((B, S), "grad_output", same_on="world")
    return (logits.to(ctx.dtype), target, grad_output, None, 10, 0.9, chunk_size)
