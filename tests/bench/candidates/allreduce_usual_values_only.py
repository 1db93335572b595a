# Right only on problem 1's usual values (integers uniform in [-64, 64], a mean near 0): where the
# values look otherwise it returns its input, as any answer that assumes the usual distribution
# would go wrong. Trial 1 draws from the second distribution (skewed to the range's low end, a
# mean near -32), so it must fail there and pass a single trial.
import torch.distributed as dist


def solution(tensor):
    out = tensor.clone()
    if abs(out.float().mean().item()) < 16:
        dist.all_reduce(out)
    return out
