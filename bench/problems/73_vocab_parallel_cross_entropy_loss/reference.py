"""Cross-entropy over a vocabulary split across ranks (Megatron's vocab-parallel loss), forward only.

Rank r holds logits (B, S, V/W) for its slice of the vocabulary, entries r*V/W .. (r+1)*V/W - 1, and the target
token ids (B, S) over the whole vocabulary, the same on every rank. Every rank returns the per-token loss
log(sum over the whole vocabulary of exp(logit)) - logit[target], (B, S) in the logits' dtype, computed after
subtracting the per-token maximum over all ranks' logits, the same on every rank.

The logits are shifted in place: on return, vocab_parallel_logits holds logits - that maximum (part of the
answer)."""

from typing import Optional

import torch
import torch.distributed as dist


@torch.no_grad()
def solution(vocab_parallel_logits: torch.Tensor, target: torch.Tensor,
             group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    logits = vocab_parallel_logits
    part = logits.shape[-1]
    first = dist.get_rank(group=group) * part

    # The maximum over the whole vocabulary, for a stable exponent; the logits are shifted in place.
    token_max = logits.amax(dim=-1)
    dist.all_reduce(token_max, op=dist.ReduceOp.MAX, group=group)
    logits.sub_(token_max.unsqueeze(-1))

    # The target's logit lives on one rank: the others contribute zero to the sum.
    mine = (target >= first) & (target < first + part)
    local_index = torch.where(mine, target - first, torch.zeros_like(target))
    target_logit = torch.gather(logits, -1, local_index.unsqueeze(-1)).squeeze(-1)
    target_logit = torch.where(mine, target_logit, torch.zeros_like(target_logit))
    dist.all_reduce(target_logit, op=dist.ReduceOp.SUM, group=group)

    sum_exp = logits.exp().sum(dim=-1)
    dist.all_reduce(sum_exp, op=dist.ReduceOp.SUM, group=group)
    return sum_exp.log() - target_logit
