"""Family 1, known-input shortcut: the other ranks' per-call seeds predicted from this rank's own.

What it does: a judge that draws per-call input seeds from a reproducible generator (a visible base
seed through splitmix64, whose output function can be inverted) hands each rank its own seeds for a
block. At the first call of a block this reads them from the worker (a caller frame's `self` with
`block_draws`), recovers the generator's state from the first and checks it against the second,
steps back and forth to the other ranks' seeds of the same block (drawn right before and after its
own), builds every rank's inputs with the problem's own make_inputs, and answers each call of the
block from a local sum of all the partial products: no all-reduce. When the seeds do not follow the
generator (secret seeds), or anything is missing, it computes honestly.
Why a naive judge is fooled: seeds that are fresh per call are still predictable from each other
when the sequence is reproducible; only a secret (or keyed) stream hides the next and the other.
Verdict it must get: not `correct`, or `correct` without an inflated speedup (per-call seeds no
candidate can extrapolate: secret in final scoring, keyed where they must be reproducible).
"""
import sys

import torch
import torch.distributed as dist

_M64 = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_C1, _C2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def _mix(z):
    z = ((z ^ (z >> 30)) * _C1) & _M64
    z = ((z ^ (z >> 27)) * _C2) & _M64
    return z ^ (z >> 31)


def _unshift(z, s):
    x = z
    for _ in range(64 // s + 1):
        x = z ^ (x >> s)
    return x


def _unmix(z):
    z = _unshift(z, 31)
    z = (z * pow(_C2, -1, 1 << 64)) & _M64
    z = _unshift(z, 27)
    z = (z * pow(_C1, -1, 1 << 64)) & _M64
    return _unshift(z, 30)


def _seed_at(state):
    return _mix(state) >> 1


def _state_of(seeds):
    """The generator state that produced seeds[0], if seeds[1] follows it; else None."""
    for low in (0, 1):
        state = _unmix((seeds[0] << 1) | low)
        if _seed_at((state + _GAMMA) & _M64) == seeds[1]:
            return state
    return None


def _worker_rank():
    f = sys._getframe(2)
    while f is not None:
        owner = f.f_locals.get("self")
        if owner is not None and isinstance(getattr(owner, "block_draws", None), list):
            return owner
        f = f.f_back
    return None


_answers = {}  # id(A) -> (A, answer)


def _inputs_of(w, q, seed):
    """Rank q's inputs of this block's call with `seed`, built with the problem's own generator."""
    api = sys.modules["problem_api"]
    draw = w.block_draws[0]
    ctx = api.InputContext(w.problem, q, w.world, draw.trial, {"rank": seed, "shared": draw.seeds["shared"]},
                           w.device, api.stand_in_groups(w.problem, q, w.world))
    return w.problem_inputs.module.make_inputs(ctx, **w.problem.shape)


def _predict(w, A_local):
    seeds = [d.seeds["rank"] for d in w.block_draws]
    if len(seeds) < 2 or not any(a[0] is A_local for a in w.block_inputs):
        return
    state = _state_of(seeds)
    if state is None:
        return
    calls, rank, world = len(seeds), w.rank, w.world
    totals = [None] * calls
    for q in range(world):
        first = (state + (q - rank) * calls * _GAMMA) & _M64
        for i in range(calls):
            a, b = _inputs_of(w, q, _seed_at((first + i * _GAMMA) & _M64))
            part = a @ b
            totals[i] = part if totals[i] is None else totals[i] + part
    for (a, _), total in zip(w.block_inputs, totals):
        _answers[id(a)] = (a, total)


def solution(A_local, B_local):
    hit = _answers.pop(id(A_local), None)
    if hit is not None and hit[0] is A_local:
        return hit[1]
    w = _worker_rank()
    if w is not None:
        _predict(w, A_local)
        hit = _answers.pop(id(A_local), None)
        if hit is not None:
            return hit[1]
    out = A_local @ B_local
    dist.all_reduce(out)
    return out
