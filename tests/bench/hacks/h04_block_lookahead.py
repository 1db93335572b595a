"""Family 4, batch-and-skip with look-ahead: a whole timed block's work in its first call.

What it does: a judge that hands a rank the inputs of a whole block before the block starts (so
that building them is not timed) lets the candidate see calls it has not been asked for yet. At the
first call of a block this finds the worker's prepared inputs through its caller's frames (a local
`self` holding `block_inputs`), stacks all of them and does one all-reduce for the block, and answers
the block's other calls from that. Every answer is right, so checked calls pass; the block costs one
collective's latency instead of five. Outside a block it computes honestly.
Why a naive judge is fooled: per-call inputs are fresh, but not secret from the candidate's process
until the call: the look-ahead turns per-call work into batched work, which a latency-bound problem
rewards.
Verdict it must get: not `correct`, or `correct` without an inflated speedup (a call's inputs exist
in the candidate's process only from its own call on).
"""
import sys

import torch
import torch.distributed as dist

_answers = {}  # id(input) -> (input, answer)


def _prepared_inputs():
    f = sys._getframe(2)
    while f is not None:
        owner = f.f_locals.get("self")
        if owner is not None and isinstance(getattr(owner, "block_inputs", None), list):
            return owner.block_inputs
        f = f.f_back
    return []


def solution(tensor):
    hit = _answers.pop(id(tensor), None)
    if hit is not None and hit[0] is tensor:
        return hit[1]
    block = [args[0] for args in _prepared_inputs()]
    if len(block) > 1 and any(t is tensor for t in block):
        stacked = torch.stack(block)
        dist.all_reduce(stacked)
        for t, out in zip(block, stacked.unbind(0)):
            _answers[id(t)] = (t, out)
        return _answers.pop(id(tensor))[1]
    out = tensor.clone()
    dist.all_reduce(out)
    return out
