# The reference all-reduce plus a GPU-side sleep of 5% of the reference's own time, calibrated on
# the first call: the judge must report it slower in every trial.
import torch
import torch.distributed as dist

_extra_cycles = None


def _reference(tensor):
    out = tensor.clone()
    dist.all_reduce(out)
    return out


def _median_ms(fn, n=50, prepare=lambda: None):
    pairs = []
    for _ in range(n):
        prepare()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        pairs.append((s, e))
    torch.cuda.synchronize()
    return sorted(s.elapsed_time(e) for s, e in pairs)[n // 2]


def _calibrate(tensor):
    for _ in range(20):
        _reference(tensor)
    # Timed as the judge times it: cold L2 and ranks aligned by a one-element all-reduce.
    l2 = torch.cuda.get_device_properties(tensor.device).L2_cache_size
    flush = torch.empty(2 * l2, dtype=torch.uint8, device=tensor.device)
    bar = torch.zeros(1, device=tensor.device)

    def prepare():
        flush.zero_()
        dist.all_reduce(bar)

    ref_ms = _median_ms(lambda: _reference(tensor), n=200, prepare=prepare)
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
