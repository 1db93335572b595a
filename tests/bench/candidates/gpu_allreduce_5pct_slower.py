# The reference all-reduce followed by a GPU-side spin of 5% of the reference's own call time: the
# judge must report it slower in every trial.
#
# The spin is calibrated once, in the first call (every call gets inputs of its own, so there is no
# later moment all ranks would agree on), after a warm-up long enough for NCCL and the clocks to
# settle (1.5 s: a delay fixed within the first 300 ms came out near 10%). Calibration times the
# reference as the judge does (cold L2, ranks aligned by a one-element all-reduce, each block of
# calls behind a GPU spin); the spin is then corrected from the slowed call's own median (the spin
# kernel's launch costs time of its own), and all ranks agree on the largest delay, so every rank
# spins the same number of cycles.
import time

import torch
import torch.distributed as dist

SLOWDOWN = 0.05
_state = {"cycles": None}


def _reference(tensor):
    out = tensor.clone()
    dist.all_reduce(out)
    return out


def _median_ms(fn, n, prepare=lambda: None, hold_cycles=0):
    pairs = []
    for i in range(n):
        if hold_cycles and i % 5 == 0:
            torch.cuda._sleep(hold_cycles)  # as the judge: the host gets ahead of each block of 5
        prepare()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        pairs.append((s, e))
    torch.cuda.synchronize()
    return sorted(s.elapsed_time(e) for s, e in pairs)[n // 2]


def _agree_max(value, device):
    t = torch.tensor([float(value)], dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def _calibrate(tensor):
    l2 = torch.cuda.get_device_properties(tensor.device).L2_cache_size
    flush = torch.empty(2 * l2, dtype=torch.uint8, device=tensor.device)
    bar = torch.zeros(1, device=tensor.device)

    def prepare():
        flush.zero_()
        dist.all_reduce(bar)

    cycles = 200_000
    torch.cuda._sleep(cycles)
    sleep_ms = _median_ms(lambda: torch.cuda._sleep(cycles), 20)
    hold = int(2.0 / sleep_ms * cycles)  # 2 ms of spin before each block of 5 calls
    # Warm up for 1.5 s (the same number of rounds on every rank), then time 200 calls.
    t0, rounds = time.perf_counter(), 0
    while _agree_max(time.perf_counter() - t0 < 1.5, tensor.device) > 0 or rounds < 2:
        _median_ms(lambda: _reference(tensor), 20, prepare, hold)
        rounds += 1
    ref_ms = _median_ms(lambda: _reference(tensor), 200, prepare, hold)
    # The spin kernel costs more than its cycles (its launch and the gap before it: about 1.5 us,
    # 4% of problem 1's call), so the cycles are corrected from the slowed call's own median, twice.
    per_ms = cycles / sleep_ms
    spin = int(SLOWDOWN * ref_ms * per_ms)
    for _ in range(2):
        slowed_ms = _median_ms(lambda: (_reference(tensor), torch.cuda._sleep(spin)), 200, prepare, hold)
        spin = max(0, int(spin + ((1 + SLOWDOWN) * ref_ms - slowed_ms) * per_ms))
    return int(_agree_max(spin, tensor.device))


def solution(tensor):
    if _state["cycles"] is None:
        _state["cycles"] = _calibrate(tensor)
    out = _reference(tensor)
    torch.cuda._sleep(_state["cycles"])
    return out
