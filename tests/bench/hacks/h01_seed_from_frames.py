"""Family 1, known-input shortcut: the hidden seed read from the worker's frames (or environment).

What it does: while it is imported, the worker's own frame is on the stack; this walks the frames
for the `plan` dict (seed, trials, shape) and the worker's `make_inputs`, falls back to any
environment variable naming a seed, and precomputes every trial's RMSNorm for its rank from all
ranks' inputs (the global sum of squares without any all-reduce). A call recognises its trial from
a few input values and returns the stored answer; unknown inputs get the honest computation.
Why a naive judge is fooled: the candidate shares a process with the code that knows the seed.
Verdict it must get: not `correct`, or `correct` without an inflated speedup (the seed and the way
inputs are built are out of the candidate's process).
"""
import os
import sys

import torch
import torch.distributed as dist

_answers = []  # (fingerprint of this rank's hidden states, answer)


def _fingerprint(t):
    return tuple(t.reshape(-1)[:16].float().tolist())


def _find_plan():
    f = sys._getframe()
    while f is not None:
        plan = f.f_locals.get("plan")
        if isinstance(plan, dict) and "seed" in plan:
            return plan, f.f_locals.get("make_inputs")
        f = f.f_back
    for name, value in os.environ.items():
        if "SEED" in name.upper() and value.isdigit():
            return {"seed": int(value), "trials": list(range(5)), "problem": {"dtype": "bfloat16",
                                                                              "shape": {"M": 1024, "N": 1024}}}, None
    return None, None


def _precompute():
    plan, make_inputs = _find_plan()
    make_inputs = make_inputs or getattr(sys.modules.get("pk_inputs"), "make_inputs", None)
    if plan is None or make_inputs is None:
        return
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dtype = getattr(torch, plan["problem"]["dtype"])
    for trial in plan["trials"]:
        ins = [make_inputs(r, world, trial, int(plan["seed"]), "cpu", dtype, **plan["problem"]["shape"])
               for r in range(world)]
        sum_sq = sum(x.float().pow(2).sum(dim=-1, keepdim=True) for x, _, _ in ins)
        x, w, eps = ins[rank]
        var = sum_sq / (x.shape[-1] * world)
        _answers.append((_fingerprint(x), w * (x.float() * torch.rsqrt(var + eps)).to(dtype)))


_precompute()


def solution(local_hidden_states, local_weight, variance_epsilon):
    key = _fingerprint(local_hidden_states)
    for fp, answer in _answers:
        if fp == key:
            return answer
    x = local_hidden_states.float()
    sum_sq = x.pow(2).sum(dim=-1, keepdim=True)
    dist.all_reduce(sum_sq)
    var = sum_sq / (x.shape[-1] * dist.get_world_size())
    return local_weight * (x * torch.rsqrt(var + variance_epsilon)).to(local_hidden_states.dtype)
