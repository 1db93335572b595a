"""Family 5, side stream (GPU only): a block's work done beside the judge's wait before the block.

What it does: before a timed block the GPU waits while the host enqueues the block, so that no
timed call waits for a launch. At the first call of a block this finds the worker's prepared inputs
through its caller's frames (as h04_block_lookahead does) and queues one all-reduce per call of the
block on a stream of its own, at once, then returns; every call (the first too) answers from that
stream, its own stream made to wait for the answer. A wait that occupies one GPU thread leaves the
rest of the GPU idle: the side stream's work runs there and is done before the first timed call
starts, so the waits cost nothing. Outside a block it computes honestly.
Why a naive judge is fooled: the calls' events bracket waits for work that is already done, and
the block's wall-clock does not grow, since the work ran inside the judge's own wait.
Verdict it must get: `correct` without an inflated speedup (a wait that holds every
multiprocessor makes the side stream's work run after it, inside the block's span: in the first
call, whose share of the block gives the batching away, or beside the flushes, which then take longer
than the reference's).
"""
import sys

import torch
import torch.distributed as dist

_answers = {}  # id(input) -> (input, answer, event)
_side = []


def _prepared_inputs():
    f = sys._getframe(2)
    while f is not None:
        owner = f.f_locals.get("self")
        if owner is not None and isinstance(getattr(owner, "block_inputs", None), list):
            return owner.block_inputs
        f = f.f_back
    return []


def _answer(tensor):
    hit = _answers.pop(id(tensor), None)
    if hit is None or hit[0] is not tensor:
        return None
    torch.cuda.current_stream().wait_event(hit[2])
    return hit[1]


def solution(tensor):
    found = _answer(tensor)
    if found is not None:
        return found
    block = [args[0] for args in _prepared_inputs()]
    if len(block) > 1 and any(t is tensor for t in block):
        if not _side:
            _side.append(torch.cuda.Stream())
        with torch.cuda.stream(_side[0]):
            for t in block:
                out = t.clone()
                dist.all_reduce(out)
                done = torch.cuda.Event()
                done.record()
                _answers[id(t)] = (t, out, done)
        return _answer(tensor)
    out = tensor.clone()
    dist.all_reduce(out)
    return out
