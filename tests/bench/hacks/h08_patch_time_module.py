"""Family 8, timer patching: time.* replaced by clocks that stop during the candidate's calls.

What it does: computes honestly, but replaces time.perf_counter, perf_counter_ns, monotonic,
monotonic_ns and time in the `time` module with clocks that exclude the time spent inside its own
calls.
Why a naive judge is fooled: a judge that calls time.perf_counter() when it times reads the patched
clock. (The current timing module binds its clock before the candidate is imported, so this one is
expected to gain nothing even now.)
Verdict it must get: not `correct`, or `correct` without an inflated speedup.
"""
import time

import torch
import torch.distributed as dist

_hidden = [0.0]
_real = {name: getattr(time, name) for name in ("perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time")}


def _patched(name):
    real = _real[name]
    if name.endswith("_ns"):
        return lambda: real() - int(_hidden[0] * 1e9)
    return lambda: real() - _hidden[0]


for _name in _real:
    setattr(time, _name, _patched(_name))


def solution(local_hidden_states, local_weight, variance_epsilon):
    t0 = _real["perf_counter"]()
    x = local_hidden_states.float()
    sum_sq = x.pow(2).sum(dim=-1, keepdim=True)
    dist.all_reduce(sum_sq)
    var = sum_sq / (x.shape[-1] * dist.get_world_size())
    out = local_weight * (x * torch.rsqrt(var + variance_epsilon)).to(local_hidden_states.dtype)
    _hidden[0] += 0.98 * (_real["perf_counter"]() - t0)
    return out
