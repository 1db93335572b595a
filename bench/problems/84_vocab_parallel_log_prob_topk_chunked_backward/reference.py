"""Backward of 83's target log-probabilities: the gradient with respect to the vocabulary-parallel logits.

Rank r holds logits (B, S, V/W) of vocabulary entries r*V/W .. (r+1)*V/W - 1 for all B*S tokens, the target ids
(B, S) and the gradient grad_output (B, S) at the log-probabilities, both the same on every rank. The B*S tokens
(flattened, batch-major) are taken in chunks of B * chunk_size consecutive tokens (the last may be shorter); each
chunk is split into W equal blocks, and one all-to-all per chunk gives rank r its block with the whole vocabulary,
in the logits' dtype. There, per token, the top-k / top-p filter of 83 (the kept set: logits >= the k-th largest,
then those whose ascending running sum of bf16 softmax probabilities exceeds 1 - top_p, always the largest) and
with p = softmax(filtered logits) in float32, the gradient (onehot(target) - p) * grad_output, zero outside the
kept set (no filter: everywhere). A second all-to-all per chunk sends each rank its vocabulary slice back.
Returns the gradient (B, S, V/W) in float32 for this rank's slice.

tp_group None means the default group."""

from typing import Optional, Tuple

import torch
import torch.distributed as dist
import torch.nn.functional as F


def _filter_top_k_top_p(logits: torch.Tensor, top_k: Optional[int],
                         top_p: float) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """logits (T, V) with the entries outside the top-k / top-p set replaced by -inf, and the kept set (None when
    nothing is filtered)."""
    use_k = top_k is not None and top_k > 0
    use_p = top_p is not None and top_p < 1.0
    if not use_k and not use_p:
        return logits, None
    vocab = logits.shape[-1]
    k = min(int(top_k), vocab) if use_k else vocab
    if not use_p:
        keep = logits >= torch.topk(logits, k, dim=-1).values[..., -1:]
        return logits.masked_fill(~keep, float("-inf")), keep
    ascending, order = logits.sort(dim=-1)
    keep = torch.ones_like(ascending, dtype=torch.bool)
    if use_k:
        keep = ascending >= ascending[..., vocab - k:vocab - k + 1]
        ascending = ascending.masked_fill(~keep, float("-inf"))
    in_nucleus = ascending.softmax(dim=-1).cumsum(dim=-1) > 1 - top_p
    in_nucleus[..., -1] = True  # the largest logit always stays
    keep = keep & in_nucleus
    ascending = ascending.masked_fill(~in_nucleus, float("-inf"))
    return ascending.scatter(-1, order, ascending), keep.scatter(-1, order, keep)


def _vocab_to_token_shards(logits: torch.Tensor, group) -> torch.Tensor:
    """(T, V/W) of every token -> (T/W, V) of this rank's tokens, the vocabulary slices in rank order."""
    world = dist.get_world_size(group)
    tokens, part = logits.shape
    received = torch.empty(tokens * part, dtype=logits.dtype, device=logits.device)
    dist.all_to_all_single(received, logits.contiguous().reshape(-1), group=group)
    return received.view(world, tokens // world, part).permute(1, 0, 2).reshape(tokens // world, world * part)


def _token_to_vocab_shards(values: torch.Tensor, group) -> torch.Tensor:
    """(T/W, V) of this rank's tokens -> (T, V/W) of every token for this rank's vocabulary slice."""
    world = dist.get_world_size(group)
    mine, vocab = values.shape
    send = values.reshape(mine, world, vocab // world).permute(1, 0, 2).contiguous().reshape(-1)
    received = torch.empty_like(send)
    dist.all_to_all_single(received, send, group=group)
    return received.view(world * mine, vocab // world)


@torch.no_grad()
def solution(vocab_parallel_logits: torch.Tensor, target: torch.Tensor, grad_output: torch.Tensor,
             tp_group: Optional[dist.ProcessGroup] = None, top_k: Optional[int] = None, top_p: float = 1.0,
             chunk_size: int = 1) -> torch.Tensor:
    tp_group = tp_group or dist.group.WORLD
    world, rank = dist.get_world_size(tp_group), dist.get_rank(tp_group)
    batch, seq, part = vocab_parallel_logits.shape
    tokens = batch * seq
    chunk = batch * max(1, int(chunk_size))
    if tokens % world or chunk % world:
        raise ValueError(f"B*S = {tokens} tokens and chunks of B*chunk_size = {chunk} must split over {world} ranks")

    flat_logits = vocab_parallel_logits.reshape(tokens, part)
    flat_target, flat_grad = target.reshape(-1), grad_output.reshape(-1)
    pieces = []
    for start in range(0, tokens, chunk):
        stop = min(start + chunk, tokens)
        mine = (stop - start) // world
        first = start + rank * mine
        filtered, keep = _filter_top_k_top_p(_vocab_to_token_shards(flat_logits[start:stop], tp_group), top_k, top_p)
        grad = -F.softmax(filtered.float(), dim=-1)
        grad[torch.arange(mine, device=grad.device), flat_target[first:first + mine]] += 1.0
        grad.mul_(flat_grad[first:first + mine].unsqueeze(-1))
        if keep is not None:
            grad.mul_(keep)
        pieces.append(_token_to_vocab_shards(grad, tp_group))
    return torch.cat(pieces).reshape(batch, seq, part)
