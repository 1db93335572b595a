"""Two pipeline stages of one attention layer each, every stage context-parallel (ring attention).

The ranks form a pp x cp mesh. Rank r of stage s holds hidden_states (B, S, hidden), its CP group's slice of
the sequence (on stage 0 the layer's input; later stages take their input from the stage before instead and use
only the shape of their own), and the stage's weights w_qkv (3 * H * D, hidden) (q, k, v stacked, H = num_heads)
and w_o (hidden, H * D), the same on every rank of the stage. A stage projects its tokens to q, k, v, runs ring
attention over its CP group (K and V blocks travel around the ring; each block's output and log-sum-exp are
merged in float32; causal: a rank attends to the blocks of CP ranks before it and causally within its own),
projects back with w_o and sends the result to the next stage's rank of the same CP index. Returns the stage's
output (B, S, hidden) in the input dtype: the last stage's is the pipeline's. softmax_scale None means
1 / sqrt(D); cp_group None means the default group, pp_group None a single stage."""

from typing import Optional, Tuple

import torch
import torch.distributed as dist
import torch.nn.functional as F


def _attend(q, k, v, scale: float, causal: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    """q against one K/V block, in float32: the output (B, S, H, D) and the log-sum-exp per query (B, H, S)."""
    qh, kh, vh = (t.transpose(1, 2).float() for t in (q, k, v))
    scores = (qh @ kh.transpose(-1, -2)) * scale
    if causal:
        future = torch.ones(q.shape[1], k.shape[1], dtype=torch.bool, device=q.device).triu(diagonal=1)
        scores = scores.masked_fill(future, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ vh).transpose(1, 2), torch.logsumexp(scores, dim=-1)


def _combine(acc, acc_lse, part, part_lse):
    """Folds one block's (output, lse) into the running pair; lse is kept as (B, S, H, 1) beside the output."""
    part_lse = part_lse.transpose(1, 2).unsqueeze(-1)
    if acc is None:
        return part, part_lse
    weight = torch.sigmoid(part_lse - acc_lse)
    return acc + weight * (part - acc), acc_lse - F.logsigmoid(acc_lse - part_lse)


def _ring_attention(q, k, v, scale: float, causal: bool, group) -> torch.Tensor:
    ring, me = dist.get_world_size(group), dist.get_rank(group)
    successor = dist.get_global_rank(group, (me + 1) % ring)
    predecessor = dist.get_global_rank(group, (me - 1) % ring)
    out = lse = None
    for step in range(ring):
        # At step s this rank holds the block of CP rank me - s; the next one is on its way meanwhile.
        pending = None
        if step < ring - 1:
            incoming_k, incoming_v = torch.empty_like(k), torch.empty_like(v)
            pending = dist.batch_isend_irecv([
                dist.P2POp(dist.isend, k, successor, group=group),
                dist.P2POp(dist.irecv, incoming_k, predecessor, group=group),
                dist.P2POp(dist.isend, v, successor, group=group),
                dist.P2POp(dist.irecv, incoming_v, predecessor, group=group),
            ])
        if not causal or step <= me:
            out, lse = _combine(out, lse, *_attend(q, k, v, scale, causal and step == 0))
        if pending is not None:
            for request in pending:
                request.wait()
            k, v = incoming_k, incoming_v
    return out.to(q.dtype)


def _stage_neighbour(pp_group, offset: int) -> int:
    return dist.get_global_rank(pp_group, (dist.get_rank(pp_group) + offset) % dist.get_world_size(pp_group))


def solution(hidden_states: torch.Tensor, w_qkv: torch.Tensor, w_o: torch.Tensor, num_heads: int,
             softmax_scale: Optional[float] = None, causal: bool = False,
             cp_group: Optional[dist.ProcessGroup] = None,
             pp_group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    cp_group = cp_group or dist.group.WORLD
    head_dim = w_qkv.shape[0] // 3 // num_heads
    scale = float(softmax_scale) if softmax_scale is not None else head_dim ** -0.5
    stages = dist.get_world_size(pp_group) if pp_group is not None else 1
    stage = dist.get_rank(pp_group) if stages > 1 else 0

    x = hidden_states
    if stage > 0:  # this stage's input is the previous stage's output
        x = torch.empty_like(hidden_states)
        for request in dist.batch_isend_irecv([dist.P2POp(dist.irecv, x, _stage_neighbour(pp_group, -1),
                                                          group=pp_group)]):
            request.wait()

    B, S = x.shape[:2]
    q, k, v = F.linear(x, w_qkv).view(B, S, 3, num_heads, head_dim).unbind(dim=2)
    context = _ring_attention(q.contiguous(), k.contiguous(), v.contiguous(), scale, causal, cp_group)
    out = F.linear(context.reshape(B, S, -1), w_o)

    if stage < stages - 1:
        for request in dist.batch_isend_irecv([dist.P2POp(dist.isend, out.contiguous(),
                                                          _stage_neighbour(pp_group, 1), group=pp_group)]):
            request.wait()
    return out
