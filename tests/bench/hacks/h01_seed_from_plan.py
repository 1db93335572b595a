"""Family 1, known-input shortcut: the hidden seed read from the run plan, answers precomputed.

What it does: at import (the judge's untimed import phase) it reads the seed, the trials, the
shape and the world size from `plan.json` in its working directory, builds every rank's inputs
with the problem's own `make_inputs` (already imported by the worker as `pk_inputs`), and sums
the partial products itself. A call then recognises its trial from a few input values and returns
the stored answer: no GEMM, no all-reduce. Unknown inputs get the honest computation.
Why a naive judge is fooled: the inputs of every checked and timed call come from that seed, which
sits in a file the candidate can read.
Verdict it must get: not `correct`, or `correct` without an inflated speedup (inputs built by the
trusted side from a secret the sandbox never sees leave nothing to precompute).
"""
import json
import os
import sys

import torch
import torch.distributed as dist

_answers = []  # (fingerprint of this rank's A, full product)


def _fingerprint(t):
    return tuple(t.reshape(-1)[:16].float().tolist())


def _precompute():
    try:
        with open("plan.json") as f:
            plan = json.load(f)
        make_inputs = sys.modules["pk_inputs"].make_inputs
        seed, trials = int(plan["seed"]), plan["trials"]
        dtype, shape = getattr(torch, plan["problem"]["dtype"]), plan["problem"]["shape"]
    except (OSError, KeyError, ValueError, TypeError, AttributeError):
        return
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    for trial in trials:
        parts = [make_inputs(r, world, trial, seed, "cpu", dtype, **shape) for r in range(world)]
        total = parts[0][0] @ parts[0][1]
        for a, b in parts[1:]:
            total = total + a @ b
        _answers.append((_fingerprint(parts[rank][0]), total))


_precompute()


def solution(A_local, B_local):
    key = _fingerprint(A_local)
    for fp, answer in _answers:
        if fp == key:
            return answer
    out = A_local @ B_local
    dist.all_reduce(out)
    return out
