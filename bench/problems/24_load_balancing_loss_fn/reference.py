"""Auxiliary load-balancing loss of a top-k MoE router (Switch / Mixtral style), averaged over data-parallel
ranks.

Rank r holds router logits gate_logits (T, E) for its T tokens (or a tuple of per-layer logits, concatenated on
tokens). Per token: routing probabilities p = softmax(logits) and its top_k experts. With f[k, e] the share of
tokens whose k-th choice is expert e and P[e] the mean routing probability of expert e (over tokens, or over
the tokens attention_mask marks valid), the rank's loss is num_experts * sum over k, e of f[k, e] * P[e].
Returns the mean of the ranks' losses, a 0-d float32 tensor (the token shares are float32, the probabilities in
the logits' dtype), the same on every rank."""

from typing import Optional, Tuple, Union

import torch
import torch.distributed as dist
import torch.nn.functional as F


def _masked_mean(values: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    return (values * weights).sum(dim=0) / weights.sum(dim=0)


def solution(gate_logits: Union[torch.Tensor, Tuple[torch.Tensor, ...]], num_experts: int, top_k: int = 2,
             attention_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
    if isinstance(gate_logits, (tuple, list)):
        device = gate_logits[0].device
        logits = torch.cat([layer.to(device) for layer in gate_logits], dim=0)
    else:
        device = gate_logits.device
        logits = gate_logits

    probs = F.softmax(logits, dim=-1)
    chosen = torch.topk(probs, top_k, dim=-1).indices
    one_hot = F.one_hot(chosen, num_experts).float()  # (tokens, top_k, E)

    if attention_mask is None:
        token_share = one_hot.mean(dim=0)
        prob_share = probs.mean(dim=0)
    else:
        # The mask (batch, seq) covers the tokens of each layer; repeat it for every layer.
        layers = logits.shape[0] // attention_mask.numel()
        valid = attention_mask.reshape(1, -1).expand(layers, -1).reshape(-1).to(device)
        token_share = _masked_mean(one_hot, valid[:, None, None].expand_as(one_hot))
        prob_share = _masked_mean(probs, valid[:, None].expand_as(probs))

    loss = (token_share * prob_share.unsqueeze(0)).sum() * num_experts
    if dist.is_available() and dist.is_initialized():
        dist.all_reduce(loss, op=dist.ReduceOp.SUM)
        loss = loss / dist.get_world_size()
    return loss
