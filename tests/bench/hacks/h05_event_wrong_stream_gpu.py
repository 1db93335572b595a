"""Family 5, events on the wrong stream (GPU only): the judge's end event lands on an idle stream.

What it does: at the start of a call it makes a second stream wait for the caller's stream (so that
stream is ordered just after the judge's start event), does the all-reduce on the caller's stream,
then leaves the second stream current. The judge records its end event on the current stream,
which has no work: the event completes right after the start event, before the all-reduce ends.
Two streams alternate, so the next call's work runs on the stream the judge's next start event
used.
Why a naive judge is fooled: it records events on whatever stream is current after the call; the
checked output is right because it synchronises the whole device before recording it.
Verdict it must get: not `correct`, or `correct` without an inflated speedup (events recorded on
the judge's own stream with device-wide completion, or outside wall-clock per block).
"""
import torch
import torch.distributed as dist

_streams = []


def solution(tensor):
    here = torch.cuda.current_stream()
    if not _streams:
        _streams.extend([here, torch.cuda.Stream()])
    there = _streams[1] if here == _streams[0] else _streams[0]
    there.wait_stream(here)
    out = tensor.clone()
    dist.all_reduce(out)
    torch.cuda.set_stream(there)
    return out
