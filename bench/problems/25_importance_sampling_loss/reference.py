"""Clipped importance-sampling policy-gradient loss of a language-model head, with the tokens spread over the
ranks (data parallel).

Rank r holds the hidden states of its M tokens (M, N), the head's weight (V, N), the sampled tokens `labels` (M,)
(ignore_index marks padding), their log-probabilities under the policy that sampled them `old_logprobs` (M,) and
their `advantages` (M,). Per token: the log-probability of its label under the head (the negated cross-entropy of
the logits hidden @ weight^T, 0 where ignored), delta = that minus old_logprobs (0 where ignored) clamped to
[-20, 20], ratio = exp(delta), and the policy-gradient term -ratio * advantage (0 where ignored). Over every rank's
valid tokens (n, counted over all ranks, at least 1):
- loss: the sum of the policy-gradient terms over n; its gradient (when the inputs require one) is that of the
  surrogate sum(ratio * advantage * cross-entropy) / n, with ratio and advantage held constant (the surrogate
  enters as `x - x.detach()`, so it adds nothing to the value);
- metrics: [mean ratio, least ratio, largest ratio, mean of ratio - delta - 1 (the k3 estimate of the KL
  divergence), mean cross-entropy].
Arithmetic in the inputs' dtype; the token count in float32. Returns (loss float32 0-d, None, the rank's
per-token log-probabilities (M,) and per-token policy-gradient terms (M,) in the inputs' dtype, metrics float32
(5,)), the loss and metrics the same on every rank."""

from typing import Any, Tuple

import torch
import torch.distributed as dist
import torch.nn.functional as F

DELTA_LIMIT = 20.0


def _summed(x: torch.Tensor, op=dist.ReduceOp.SUM) -> torch.Tensor:
    dist.all_reduce(x, op=op)
    return x


def solution(hidden_states: torch.Tensor, weight: torch.Tensor, labels: torch.Tensor, old_logprobs: torch.Tensor,
             advantages: torch.Tensor, ignore_index: int = -100) -> Tuple[torch.Tensor, Any, torch.Tensor,
                                                                          torch.Tensor, torch.Tensor]:
    flat_labels = labels.reshape(-1)
    logits = F.linear(hidden_states, weight).reshape(flat_labels.numel(), -1)
    ce = F.cross_entropy(logits, flat_labels, ignore_index=ignore_index, reduction="none")
    logprobs = -ce.detach()
    valid = flat_labels != ignore_index
    padding = ~valid

    n = _summed(valid.sum().float()).clamp(min=1.0)

    delta = (logprobs - old_logprobs.reshape(-1)).masked_fill(padding, 0.0).clamp(-DELTA_LIMIT, DELTA_LIMIT)
    ratio = delta.exp()
    adv = advantages.reshape(-1)
    pg = (ratio * adv).masked_fill(padding, 0.0).neg()

    pg_mean = _summed(pg.sum()) / n
    surrogate = ((ratio.detach() * adv).masked_fill(padding, 0.0) * ce).sum() / n
    loss = pg_mean.detach() + (surrogate - surrogate.detach())

    ratio_mean = _summed(ratio.masked_fill(padding, 0.0).sum()) / n
    ratio_min = _summed(ratio.masked_fill(padding, float("inf")).min(), dist.ReduceOp.MIN)
    ratio_max = _summed(ratio.masked_fill(padding, float("-inf")).max(), dist.ReduceOp.MAX)
    k3_mean = _summed((ratio - delta - 1.0).masked_fill(padding, 0.0).sum()) / n
    ce_mean = _summed(ce.detach().masked_fill(padding, 0.0).sum()) / n
    metrics = torch.stack([ratio_mean, ratio_min, ratio_max, k3_mean, ce_mean])

    return loss, None, logprobs.view_as(labels), pg.view_as(labels), metrics
