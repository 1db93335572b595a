"""Muon's Newton-Schulz orthogonalisation of a tensor-parallel matrix: rank r holds columns r*C/W .. (r+1)*C/W
of X (R, C) (partition_dim 1; with partition_dim 0 it holds rows and works on the transpose). In float32, X is
divided by its Frobenius norm over all ranks (at least eps), then each of `steps` iterations with the
coefficients (a, b, c) of the step maps X to a X + (b G + c G G) X, where G = X X^T (R, R) is summed over the
ranks' column blocks. Every rank returns its block of the result in the input dtype, (R, C/W). Coefficient
sets cycle when steps exceeds their number; steps must be a multiple of it. group None means the default
group."""

from typing import Optional, Sequence, Tuple

import torch
import torch.distributed as dist

# (a, b, c) per iteration for each named schedule.
COEFFICIENTS = {
    "simple": ((3.4445, -4.7750, 2.0315),),
    "quintic": ((4.0848, -6.8946, 2.9270), (3.9505, -6.3029, 2.6377), (3.7418, -5.5913, 2.3037),
                (2.8769, -3.1427, 1.2046), (2.8366, -3.0525, 1.2012)),
    "polar_express": ((8.2051, -22.9019, 16.4607), (4.0664, -2.8612, 0.5184), (3.9096, -2.8234, 0.5250),
                      (3.2856, -2.4647, 0.5074), (2.2779, -1.6447, 0.4162), (1.8726, -1.2307, 0.3585),
                      (1.8564, -1.2132, 0.3568), (1.8750, -1.2500, 0.3750)),
    "aol": ((4.0098, -7.0585, 2.4635), (3.4585, -5.5479, 2.5959), (2.7573, -3.2939, 1.4254),
            (2.7215, -3.0494, 1.3169)),
}


def _normalised(x: torch.Tensor, group, eps: float = 1e-7) -> torch.Tensor:
    squares = (x * x).sum()
    dist.all_reduce(squares, op=dist.ReduceOp.SUM, group=group)
    return x / torch.sqrt(squares).clamp_min(eps)


def _iteration(x: torch.Tensor, abc: Tuple[float, float, float], group) -> torch.Tensor:
    a, b, c = abc
    gram = x @ x.mT
    dist.all_reduce(gram, op=dist.ReduceOp.SUM, group=group)
    poly = torch.addmm(gram, gram, gram, beta=b, alpha=c)  # b G + c G G
    return torch.addmm(x, poly, x, beta=a, alpha=1.0)      # a X + poly X


@torch.no_grad()
def solution(x: torch.Tensor, steps: int = 5, coefficient_type: str = "quintic", partition_dim: int = 1,
             group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    if x.ndim != 2:
        raise ValueError(f"x must be a matrix, got {x.ndim} dimensions")
    if coefficient_type not in COEFFICIENTS:
        raise ValueError(f"coefficient_type {coefficient_type!r} is not one of {sorted(COEFFICIENTS)}")
    schedule: Sequence[Tuple[float, float, float]] = COEFFICIENTS[coefficient_type]
    if steps % len(schedule):
        raise ValueError(f"steps={steps} is not a multiple of the {len(schedule)} {coefficient_type} coefficients")
    if partition_dim not in (0, 1):
        raise ValueError(f"partition_dim must be 0 or 1, got {partition_dim}")

    work = (x.mT.contiguous() if partition_dim == 0 else x).to(torch.float32)
    work = _normalised(work, group)
    for step in range(steps):
        work = _iteration(work, schedule[step % len(schedule)], group)
    work = work.to(x.dtype)
    return work.mT.contiguous() if partition_dim == 0 else work.contiguous()
