"""Family 2, output cache keyed on the id() of the input objects.

What it does: remembers the answer per (id(hidden), id(weight), eps), keeping the objects alive so
that no id is reused, and returns it when the same objects come again.
Why a naive judge is fooled: the timed calls of a trial all pass the same Python objects.
Verdict it must get: not `correct`, or `correct` without an inflated speedup (new input objects with
new values for every timed call or block, timed outputs checked).
"""
import torch
import torch.distributed as dist

_cache = {}


def solution(local_hidden_states, local_weight, variance_epsilon):
    key = (id(local_hidden_states), id(local_weight), variance_epsilon)
    if key not in _cache:
        x = local_hidden_states.float()
        sum_sq = x.pow(2).sum(dim=-1, keepdim=True)
        dist.all_reduce(sum_sq)
        var = sum_sq / (x.shape[-1] * dist.get_world_size())
        out = local_weight * (x * torch.rsqrt(var + variance_epsilon)).to(local_hidden_states.dtype)
        _cache[key] = (local_hidden_states, local_weight, out)
    return _cache[key][2]
