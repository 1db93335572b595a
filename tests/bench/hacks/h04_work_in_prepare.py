"""Family 4 (and 6), batch-and-skip ahead of time: a block's work done while its inputs are built.

What it does: the judge has each set build the inputs of its next block (a `prepare` command)
before it times the block, and that command runs in the candidate's process. At import this finds
the worker's rank object through its caller's frames and wraps its prepare handler: once the
inputs exist, it runs the real work for every call of the block there and then (all ranks are in
the same command, so their collectives meet) and keeps the answers. The timed calls return them.
Every answer is right, so checked calls and commitments pass; the timed block does no work.
Why a naive judge is fooled: nothing of the block's work happens in the timed window, and the
command that builds the inputs is not timed.
Verdict it must get: not `correct`, or `correct` without an inflated speedup (the time a set takes
to build its inputs is compared with the reference's, on the judge's clock, and the excess counts
in the candidate's blocks).
"""
import sys

import torch.distributed as dist

_answers = {}  # id(input) -> (input, answer)


def _honest(*args):
    # Problem 1 (all-reduce of one tensor) or 13 (GEMM, then all-reduce of the partial products).
    out = args[0].clone() if len(args) == 1 else args[0] @ args[1]
    dist.all_reduce(out)
    return out


def _wrap_prepare():
    f = sys._getframe(1)
    while f is not None:
        rank = f.f_locals.get("self")
        if rank is not None and hasattr(rank, "cmd_prepare") and hasattr(rank, "block_inputs"):
            original = rank.cmd_prepare

            def prepare(c):
                reply = original(c)
                _answers.clear()
                for args in rank.block_inputs:
                    _answers[id(args[0])] = (args[0], _honest(*args))
                return reply

            rank.cmd_prepare = prepare
            return
        f = f.f_back


_wrap_prepare()


def solution(*args):
    hit = _answers.pop(id(args[0]), None)
    if hit is not None and hit[0] is args[0]:
        return hit[1]
    return _honest(*args)
