"""Backward pass of ring attention over a context-parallel group, then the data-parallel mean of the gradients.

The ranks form a dp x cp mesh. Rank r holds q, k, v, dout and out (B, S, H, D), its CP block of a sequence (its
own tokens), and softmax_lse (B, H, S) float32, the log-sum-exp of its queries' scores. Against the key block
of every CP rank j (K and V blocks travel around the ring) it forms, in float32, P = exp(q k_j^T * scale -
softmax_lse), dS = P * (dout v_j^T - rowsum(dout * out)), and adds dS k_j * scale to its dq; the block's
dk_j += dS^T q * scale and dv_j += P^T dout travel around the ring with the block, collecting every CP rank's
share, and arrive back at rank j. Causal: a rank uses only the key blocks of CP ranks up to its own, its own
masked causally. Then dq, dk and dv are summed over dp_group and divided by its size. Returns (dq, dk, dv),
each (B, S, H, D) in the dtype of q, k and v. softmax_scale None means 1 / sqrt(D); cp_group None means the
default group, dp_group None no averaging."""

from typing import Optional, Tuple

import torch
import torch.distributed as dist


def _block_grads(dout, q, k, v, out, lse, scale: float, causal: bool):
    """One query block against one key block, float32: (dq, dk, dv) of this pair, each (B, S, H, D)."""
    qh, kh, vh, dh, oh = (t.transpose(1, 2).float() for t in (q, k, v, dout, out))
    scores = (qh @ kh.transpose(-1, -2)) * scale
    if causal:
        future = torch.ones(q.shape[1], k.shape[1], dtype=torch.bool, device=q.device).triu(diagonal=1)
        scores = scores.masked_fill(future, float("-inf"))
    probs = torch.exp(scores - lse.unsqueeze(-1))
    d_scores = probs * (dh @ vh.transpose(-1, -2) - (dh * oh).sum(dim=-1, keepdim=True))
    grads = (d_scores @ kh * scale, d_scores.transpose(-1, -2) @ qh * scale, probs.transpose(-1, -2) @ dh)
    return tuple(g.transpose(1, 2).contiguous() for g in grads)


def _pass_on(tensors, successor: int, predecessor: int, group):
    """Starts sending `tensors` to the successor and receiving as many from the predecessor."""
    incoming = [torch.empty_like(t) for t in tensors]
    ops = []
    for t, buf in zip(tensors, incoming):
        ops += [dist.P2POp(dist.isend, t, successor, group=group),
                dist.P2POp(dist.irecv, buf, predecessor, group=group)]
    return incoming, dist.batch_isend_irecv(ops)


def _finish(requests):
    for request in requests:
        request.wait()


def solution(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor,
             softmax_lse: torch.Tensor, softmax_scale: Optional[float] = None, causal: bool = False,
             cp_group: Optional[dist.ProcessGroup] = None,
             dp_group: Optional[dist.ProcessGroup] = None) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    cp_group = cp_group or dist.group.WORLD
    scale = float(softmax_scale) if softmax_scale is not None else q.shape[-1] ** -0.5
    ring, me = dist.get_world_size(cp_group), dist.get_rank(cp_group)
    successor = dist.get_global_rank(cp_group, (me + 1) % ring)
    predecessor = dist.get_global_rank(cp_group, (me - 1) % ring)
    k, v = k.contiguous(), v.contiguous()

    dq = dkv = None  # dkv: the float32 (dk, dv) of the key block this rank holds, as far as accumulated
    arrived = dkv_pending = None
    for step in range(ring):
        # At step s this rank holds the key block of CP rank me - s, and receives the gradients of that block
        # accumulated by the ranks before it.
        kv_pending = None
        if step < ring - 1:
            next_kv, kv_pending = _pass_on([k, v], successor, predecessor, cp_group)
        if dkv_pending is not None:
            _finish(dkv_pending)
            dkv = arrived
        if not causal or step <= me:
            bq, bk, bv = _block_grads(dout, q, k, v, out, softmax_lse, scale, causal and step == 0)
            dq = bq if dq is None else dq + bq
            dkv = (bk, bv) if dkv is None else (dkv[0] + bk, dkv[1] + bv)
        if ring > 1:
            arrived, dkv_pending = _pass_on([dkv[0].contiguous(), dkv[1].contiguous()], successor, predecessor,
                                            cp_group)
        if kv_pending is not None:
            _finish(kv_pending)
            k, v = next_kv
    if ring > 1:  # after the last hand-on, every CP rank's share of this rank's own key block is here
        _finish(dkv_pending)
        dkv = arrived
    grads = [dq.to(q.dtype), dkv[0].to(k.dtype), dkv[1].to(v.dtype)]

    if dp_group is not None and dist.get_world_size(dp_group) > 1:
        replicas = dist.get_world_size(dp_group)
        for g in grads:
            dist.all_reduce(g, op=dist.ReduceOp.SUM, group=dp_group)
            g.div_(replicas)
    return tuple(grads)
