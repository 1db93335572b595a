"""Log-probabilities of target tokens under top-k / top-p (nucleus) filtering, with the vocabulary split across
tensor-parallel ranks, processed in chunks of tokens.

Rank r holds logits (B, S, V/W) of vocabulary entries r*V/W .. (r+1)*V/W - 1 for all B*S tokens, and the target
ids (B, S), the same on every rank. The B*S tokens (flattened, batch-major) are taken in chunks of
B * chunk_size consecutive tokens (the last may be shorter); each chunk is split into W equal blocks, and one
all-to-all per chunk gives rank r its block with the whole vocabulary, in the logits' dtype. There, per token:
top-k keeps the logits >= the k-th largest (ties kept); top-p sorts the kept logits ascending, takes their
softmax (in the logits' dtype) and its running sum, and keeps those whose running sum exceeds 1 - top_p, always
the largest; the rest become -inf (top_k None or 0 and top_p 1.0: no filtering). Then log_softmax in float32 and
the target's entry; an all-gather per chunk brings the chunk's log-probabilities to every rank. Returns (B, S)
float32, the same on every rank; -inf where the filter removed the target.

tp_group None means the default group."""

from typing import Optional

import torch
import torch.distributed as dist
import torch.nn.functional as F


def _filter_top_k_top_p(logits: torch.Tensor, top_k: Optional[int], top_p: float) -> torch.Tensor:
    """logits (T, V) with the entries outside the top-k / top-p set replaced by -inf."""
    use_k = top_k is not None and top_k > 0
    use_p = top_p is not None and top_p < 1.0
    if not use_k and not use_p:
        return logits
    vocab = logits.shape[-1]
    k = min(int(top_k), vocab) if use_k else vocab
    if not use_p:
        kth = torch.topk(logits, k, dim=-1).values[..., -1:]
        return logits.masked_fill(logits < kth, float("-inf"))
    ascending, order = logits.sort(dim=-1)
    if use_k:
        kth = ascending[..., vocab - k:vocab - k + 1]
        ascending = ascending.masked_fill(ascending < kth, float("-inf"))
    keep = ascending.softmax(dim=-1).cumsum(dim=-1) > 1 - top_p
    keep[..., -1] = True  # the largest logit always stays
    ascending = ascending.masked_fill(~keep, float("-inf"))
    return ascending.scatter(-1, order, ascending)


def _vocab_to_token_shards(logits: torch.Tensor, group) -> torch.Tensor:
    """(T, V/W) of every token -> (T/W, V) of this rank's tokens, the vocabulary slices in rank order."""
    world = dist.get_world_size(group)
    tokens, part = logits.shape
    received = torch.empty(tokens * part, dtype=logits.dtype, device=logits.device)
    dist.all_to_all_single(received, logits.contiguous().reshape(-1), group=group)
    return received.view(world, tokens // world, part).permute(1, 0, 2).reshape(tokens // world, world * part)


@torch.no_grad()
def solution(vocab_parallel_logits: torch.Tensor, target: torch.Tensor,
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
    flat_target = target.reshape(-1)
    pieces = []
    for start in range(0, tokens, chunk):
        stop = min(start + chunk, tokens)
        mine = (stop - start) // world
        logits = _vocab_to_token_shards(flat_logits[start:stop], tp_group)
        log_probs = F.log_softmax(_filter_top_k_top_p(logits, top_k, top_p).float(), dim=-1)
        my_target = flat_target[start + rank * mine:start + (rank + 1) * mine]
        picked = log_probs.gather(-1, my_target.unsqueeze(-1)).squeeze(-1)
        every = [torch.empty_like(picked) for _ in range(world)]
        dist.all_gather(every, picked, group=tp_group)
        pieces.append(torch.cat(every))
    return torch.cat(pieces).reshape(batch, seq)
