"""One attention layer over a tensor-parallel x context-parallel mesh.

Rank r holds hidden_states (B, S, H*D), its CP group's slice of the sequence (the same on every rank of its TP
group), and its TP shard of the weights: w_qkv (3 * h * D, H*D) for its h = num_heads / tp heads (q, k, v
stacked) and w_o (H*D, h * D). It projects its tokens to q, k, v of its heads, runs ring attention over the CP
group (the K and V blocks travel around the ring; each block's attention output and log-sum-exp are merged in
float32; causal: a rank attends to the blocks of CP ranks before it, and causally within its own), projects
back with its w_o shard and sums over the TP group. Returns (B, S, H*D) in the input dtype. softmax_scale None
means 1 / sqrt(D); groups None mean the default group."""

from typing import Optional, Tuple

import torch
import torch.distributed as dist
import torch.nn.functional as F


def _block_attention(q, k, v, scale: float, causal: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    """Attention of q against one K/V block in float32: the output (B, S, h, D) and the log-sum-exp (B, h, S)."""
    qh, kh, vh = (t.transpose(1, 2).to(torch.float32) for t in (q, k, v))
    scores = torch.matmul(qh, kh.transpose(-2, -1)) * scale
    if causal:
        later = torch.ones(q.shape[1], k.shape[1], dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(later, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    out = torch.matmul(torch.softmax(scores, dim=-1), vh).transpose(1, 2)
    return out, lse


def _merge(out, lse, block_out, block_lse):
    """Adds a block to the running (out, lse) of a query: softmax weights by log-sum-exp, in a stable form."""
    block_lse = block_lse.transpose(1, 2).unsqueeze(-1)  # (B, S, h, 1), like out
    if out is None:
        return block_out, block_lse
    out = out - torch.sigmoid(block_lse - lse) * (out - block_out)
    lse = lse - F.logsigmoid(lse - block_lse)
    return out, lse


def _ring_attention(q, k, v, scale: float, causal: bool, group) -> torch.Tensor:
    size = dist.get_world_size(group)
    me = dist.get_rank(group)
    send_to = dist.get_global_rank(group, (me + 1) % size)
    receive_from = dist.get_global_rank(group, (me - 1) % size)
    out = lse = None
    for step in range(size):
        # Start passing the current block on while this one is used; at step s a rank holds the block of CP
        # rank me - s.
        if step + 1 < size:
            next_k, next_v = torch.empty_like(k), torch.empty_like(v)
            requests = dist.batch_isend_irecv([
                dist.P2POp(dist.isend, k, send_to, group=group), dist.P2POp(dist.irecv, next_k, receive_from, group=group),
                dist.P2POp(dist.isend, v, send_to, group=group), dist.P2POp(dist.irecv, next_v, receive_from, group=group),
            ])
        if not causal or step <= me:
            out, lse = _merge(out, lse, *_block_attention(q, k, v, scale, causal and step == 0))
        if step + 1 < size:
            for request in requests:
                request.wait()
            k, v = next_k, next_v
    return out.to(q.dtype)


def solution(hidden_states: torch.Tensor, w_qkv: torch.Tensor, w_o: torch.Tensor, num_heads: int,
             softmax_scale: Optional[float] = None, causal: bool = False,
             tp_group: Optional[dist.ProcessGroup] = None,
             cp_group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    tp_group = tp_group or dist.group.WORLD
    cp_group = cp_group or dist.group.WORLD
    tp = dist.get_world_size(tp_group)
    heads = num_heads // tp
    head_dim = w_qkv.shape[0] // 3 // heads
    scale = float(softmax_scale) if softmax_scale is not None else head_dim ** -0.5
    B, S = hidden_states.shape[:2]
    q, k, v = F.linear(hidden_states, w_qkv).view(B, S, 3, heads, head_dim).unbind(dim=2)
    context = _ring_attention(q.contiguous(), k.contiguous(), v.contiguous(), scale, causal, cp_group)
    out = F.linear(context.reshape(B, S, -1), w_o)
    if tp > 1:
        dist.all_reduce(out, op=dist.ReduceOp.SUM, group=tp_group)
    return out
