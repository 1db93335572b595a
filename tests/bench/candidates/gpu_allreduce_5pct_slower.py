# The reference all-reduce plus a GPU-side sleep of 5% of the reference's own time, calibrated on
# the first call: the judge must report it slower in every trial.
import torch
import torch.distributed as dist

_extra_cycles = None


def _reference(tensor):
    out = tensor.clone()
    dist.all_reduce(out)
    return out


def _median_ms(fn, n=50):
    times = []
    for _ in range(n):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return sorted(times)[n // 2]


def _calibrate(tensor):
    for _ in range(20):
        _reference(tensor)
    ref_ms = _median_ms(lambda: _reference(tensor))
    cycles = 1_000_000
    sleep_ms = _median_ms(lambda: torch.cuda._sleep(cycles), n=10)
    t = torch.tensor([0.05 * ref_ms / sleep_ms * cycles], device=tensor.device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)  # the same delay on every rank
    return int(t.item())


def solution(tensor):
    global _extra_cycles
    if _extra_cycles is None:
        _extra_cycles = _calibrate(tensor)
    out = _reference(tensor)
    torch.cuda._sleep(_extra_cycles)
    return out
