"""LayerNorm backward, the parameter gradients of a data-parallel batch: rank r holds X_hat (B, H), the
normalised activations of its B rows, and dY (B, H), the gradients of the layer's output for them. Every rank
returns (d_gamma, d_beta), both (H,) in the input dtype and the same on every rank: d_gamma sums dY * X_hat and
d_beta sums dY over all rows of all ranks. Each rank reduces its own rows in the input dtype (the product is
rounded to it before the sum), then the two partial sums are all-reduced, each in the input dtype."""

from typing import Tuple

import torch
import torch.distributed as dist


@torch.no_grad()
def solution(X_hat: torch.Tensor, dY: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    # This rank's rows.
    d_beta = torch.sum(dY, dim=0)
    d_gamma = torch.sum(dY * X_hat, dim=0)
    # All ranks' rows: one sum per gradient.
    dist.all_reduce(d_beta, op=dist.ReduceOp.SUM)
    dist.all_reduce(d_gamma, op=dist.ReduceOp.SUM)
    return d_gamma, d_beta
