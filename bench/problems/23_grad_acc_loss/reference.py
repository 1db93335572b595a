"""Token-weighted loss normalisation for gradient accumulation, forward and backward.

Rank r holds the mean loss of its micro-batch (a 0-d tensor), its number of valid tokens n_r and the
number of valid tokens over all ranks N (0-d int64 tensors), and the gradients arriving at the two outputs.
Forward: loss_sum = sum over ranks of loss_r * n_r (all-reduced) and normalized_loss = loss_sum / N.
Backward (analytic): the gradient at this rank's loss is grad_normalized_loss * n_r / N + grad_loss_sum * n_r
(grad_loss_sum None counts as zero). A rank without valid tokens replaces a NaN or infinite loss by a finite
number before weighting it. Returns (normalized_loss, loss_sum, grad_loss), three 0-d tensors in the loss's
dtype; normalized_loss and loss_sum are the same on every rank."""

from typing import Optional, Tuple

import torch
import torch.distributed as dist


def solution(loss: torch.Tensor, local_valid_tokens: torch.Tensor, global_valid_tokens: torch.Tensor,
             grad_normalized_loss: torch.Tensor,
             grad_loss_sum: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if int(local_valid_tokens) == 0:
        loss = torch.nan_to_num(loss)
    # Weight this rank's mean loss by its token count and add the weighted losses of all ranks.
    loss_sum = loss * local_valid_tokens
    dist.all_reduce(loss_sum, op=dist.ReduceOp.SUM)
    normalized_loss = loss_sum / global_valid_tokens

    # d normalized_loss / d loss_r = n_r / N and d loss_sum / d loss_r = n_r.
    grad_loss = grad_normalized_loss * local_valid_tokens / global_valid_tokens
    if grad_loss_sum is not None:
        grad_loss = grad_loss + grad_loss_sum * local_valid_tokens
    return normalized_loss, loss_sum, grad_loss
