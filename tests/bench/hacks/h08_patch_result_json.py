"""Family 8, result patching: the worker's result writer rewrites the candidate's timings.

What it does: computes honestly; at import it replaces json.dump with a wrapper that, when the
worker writes its result (a dict with "trials"), divides every "candidate_ms" by 50 first.
Why a naive judge is fooled: the rank reports its own timings through a file written by code in
the candidate's interpreter, with a module the candidate can patch.
Verdict it must get: not `correct`, or `correct` without an inflated speedup (results reach the
judge over a channel the candidate cannot write).
"""
import json

import torch
import torch.distributed as dist

_real_dump = json.dump


def _dump(obj, fp, *args, **kwargs):
    if isinstance(obj, dict):
        for trial in obj.get("trials", []):
            if isinstance(trial, dict) and "candidate_ms" in trial:
                trial["candidate_ms"] = [ms / 50 for ms in trial["candidate_ms"]]
    return _real_dump(obj, fp, *args, **kwargs)


json.dump = _dump


def solution(local_hidden_states, local_weight, variance_epsilon):
    x = local_hidden_states.float()
    sum_sq = x.pow(2).sum(dim=-1, keepdim=True)
    dist.all_reduce(sum_sq)
    var = sum_sq / (x.shape[-1] * dist.get_world_size())
    return local_weight * (x * torch.rsqrt(var + variance_epsilon)).to(local_hidden_states.dtype)
