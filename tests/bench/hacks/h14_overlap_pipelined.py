"""Family 14, rank asymmetry: no barrier inside the call, so the ranks' exchanges overlap the calls.

What it does: the first call on new inputs does a real all-reduce. After it, each call posts the
exchange of its own tensor for the *next* call (isend/irecv, not waited for) and answers with the
peer tensors that arrived during the previous call: the communication never sits in a timed window,
only a local sum does.
Why a naive judge is fooled: its timed calls repeat one input, so last call's peer data is this
call's; its barrier aligns the calls' starts but waits for nothing the candidate left in flight.
Verdict it must get: not `correct`, or `correct` without an inflated speedup (every timed call or
block gets fresh inputs and sampled outputs are checked).
"""
import torch
import torch.distributed as dist

_state = {"id": None}


def _post(tensor):
    rank, world = dist.get_rank(), dist.get_world_size()
    bufs, works = {}, []
    for peer in range(world):
        if peer != rank:
            works.append(dist.isend(tensor, peer))
            bufs[peer] = torch.empty_like(tensor)
            works.append(dist.irecv(bufs[peer], peer))
    return bufs, works


def solution(tensor):
    if _state["id"] != id(tensor):
        out = tensor.clone()
        dist.all_reduce(out)
        _state.update(id=id(tensor), keep=tensor, posted=_post(tensor))
        return out
    bufs, works = _state["posted"]
    for w in works:
        w.wait()  # finished long ago: they were posted during the previous call
    _state["posted"] = _post(tensor)
    out = tensor.clone()
    for b in bufs.values():
        out += b
    return out
