"""Times the reference and the candidate against each other, per rank, in one process.

Every timed call is preceded by an L2 flush (a write of twice the L2 size) and a device-side barrier
(a one-element all-reduce on the same stream), and is bracketed by CUDA events; no host sync inside a
round. Every block of calls starts behind a short GPU spin (the "blocking kernel" of nvbench), sized
from the host's own time to enqueue a block: the host gets ahead of the GPU, so no timed call waits
for the host to launch its next kernel. Without it, on launch-bound problems (a 2 MB all-reduce takes
about 45 us) some calls measured the GPU and others the host's launch gaps (p10 45 us, p90 130 us),
and the median of that mixture moved between identical functions by up to 5%.

Reference (A) and candidate (B) run in alternating blocks, A B B A A B ..., so that clock or
thermal drift lands on both alike. Every rank makes exactly the same sequence of calls, so call i
of one rank lines up with call i of every other: the judge takes the maximum over ranks per call.

The functions used here are bound when this module is imported, which the worker does before it
imports the candidate: a candidate that patches torch.cuda.Event or dist.all_reduce afterwards does
not change how it is timed.
"""

import math
import time

import torch
import torch.distributed as dist

_Event = torch.cuda.Event
_record = torch.cuda.Event.record
_elapsed = torch.cuda.Event.elapsed_time
_synchronize = torch.cuda.synchronize
_all_reduce = dist.all_reduce
_barrier = dist.barrier
_perf_counter = time.perf_counter
_ReduceOp = dist.ReduceOp
_spin = getattr(torch.cuda, "_sleep", None)  # spins the GPU for a number of clock cycles

BLOCK = 5  # calls per block; blocks alternate between the two functions


class Settings:
    def __init__(self, d):
        self.warmup_min_calls = int(d.get("warmup_min_calls", 20))
        self.warmup_min_ms = float(d.get("warmup_min_ms", 100))
        self.warmup_max_ms = float(d.get("warmup_max_ms", 5000))
        # The first timing of a process warms up longer: clocks, cuBLAS and NCCL still settle there
        # (seen on H200: problem 13's first trial read 0.96x for identical code after 100 ms).
        self.first_warmup_min_ms = float(d.get("first_warmup_min_ms", 1000))
        self.min_calls = int(d.get("min_calls", 50))
        self.min_ms = float(d.get("min_ms", 30))
        self.max_calls = int(d.get("max_calls", 2000))
        self.cuda_graph = bool(d.get("cuda_graph", False))


class _Gpu:
    def __init__(self, device):
        self.device = torch.device(device)
        l2 = getattr(torch.cuda.get_device_properties(self.device), "L2_cache_size", 0) or (50 << 20)
        self.flush_buf = torch.empty(2 * l2, dtype=torch.uint8, device=self.device)
        self.bar = torch.zeros(1, dtype=torch.float32, device=self.device)
        self.cycles_per_ms = self._spin_rate()
        self.hold_ms = 0.5       # GPU spin before each block; set from the warm-up's enqueue times
        self.enqueue_ms = []     # host time to enqueue each warm-up block

    def _spin_rate(self):
        """Clock cycles per millisecond of the spin kernel; 0 (no spin) where there is none."""
        if _spin is None:
            return 0.0
        try:
            ms = []
            for _ in range(3):
                s, e = _Event(enable_timing=True), _Event(enable_timing=True)
                _record(s)
                _spin(1_000_000)
                _record(e)
                _synchronize(self.device)
                ms.append(_elapsed(s, e))
            return 1_000_000 / max(min(ms), 1e-3)
        except Exception:  # noqa: BLE001 - timing without the spin is still timing
            return 0.0

    def settle_hold(self):
        """After the warm-up: the spin covers 1.25x the host's typical (75th percentile) time to
        enqueue a block."""
        if self.enqueue_ms:
            typical = sorted(self.enqueue_ms)[(3 * len(self.enqueue_ms)) // 4]
            self.hold_ms = min(max(1.25 * typical, 0.1), 2.0)

    def block(self, fn, n, warmup=False):
        """Enqueues n flushed, barrier-aligned, event-timed calls behind a GPU spin; returns the
        event pairs."""
        if self.cycles_per_ms > 0:
            _spin(int(self.hold_ms * self.cycles_per_ms))
        t0 = _perf_counter()
        pairs = []
        for _ in range(n):
            self.flush_buf.zero_()
            _all_reduce(self.bar)
            s, e = _Event(enable_timing=True), _Event(enable_timing=True)
            _record(s)
            fn()
            _record(e)
            pairs.append((s, e))
        if warmup:
            self.enqueue_ms.append((_perf_counter() - t0) * 1e3)
        return pairs

    def read(self, pairs):
        _synchronize(self.device)
        return [_elapsed(s, e) for s, e in pairs]

    def agree_max(self, value):
        t = torch.tensor([float(value)], dtype=torch.float64, device=self.device)
        _all_reduce(t, op=_ReduceOp.MAX)
        return t.item()


class _Cpu:
    def settle_hold(self):
        pass

    def block(self, fn, n, warmup=False):
        times = []
        for _ in range(n):
            _barrier()
            t0 = _perf_counter()
            fn()
            times.append((_perf_counter() - t0) * 1e3)
        return times

    def read(self, times):
        return times

    def agree_max(self, value):
        t = torch.tensor([float(value)], dtype=torch.float64)
        _all_reduce(t, op=_ReduceOp.MAX)
        return t.item()


def _median(xs):
    s = sorted(xs)
    return s[len(s) // 2] if s else 0.0


def _graphed(fn, device):
    """Captures one call of fn into a CUDA graph and returns its replay."""
    stream = torch.cuda.Stream(device=device)
    stream.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream(device).wait_stream(stream)
    _synchronize(device)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    _synchronize(device)
    return graph.replay


_first = [True]


def measure(fns, device, settings):
    """Times the callables in `fns` (two: reference, candidate) against each other.

    Returns {"calls": [[ms ...] per fn], "warmup_calls": n}. All ranks must call this together.
    """
    gpu = device.startswith("cuda")
    clock = _Gpu(device) if gpu else _Cpu()
    if gpu and settings.cuda_graph:
        fns = [_graphed(fn, device) for fn in fns]

    # Warm-up: alternate blocks until every function has had enough calls and wall time, and its
    # median per block has settled (two blocks in a row within 5%), or the cap is reached.
    warm = [[] for _ in fns]
    last = [None for _ in fns]
    warmup_min_ms = settings.warmup_min_ms
    if _first[0]:
        warmup_min_ms = max(warmup_min_ms, settings.first_warmup_min_ms)
        _first[0] = False
    t0 = _perf_counter()
    while True:
        settled = True
        for i, fn in enumerate(fns):
            times = clock.read(clock.block(fn, BLOCK, warmup=True))
            warm[i] += times
            m = _median(times)
            if last[i] is None or abs(m - last[i]) > 0.05 * max(last[i], 1e-9):
                settled = False
            last[i] = m
        spent = (_perf_counter() - t0) * 1e3
        enough = all(len(w) >= settings.warmup_min_calls for w in warm) and spent >= warmup_min_ms
        done = (enough and settled) or spent >= settings.warmup_max_ms
        # Every rank must run the same number of calls: go on while any rank wants to.
        if clock.agree_max(0.0 if done else 1.0) == 0.0:
            break

    clock.settle_hold()

    # How many timed calls: at least min_calls, and enough for min_ms of calls per function.
    per_call = max(_median(w[-BLOCK:]) for w in warm)
    want = settings.min_calls
    if per_call > 0:
        want = max(want, math.ceil(settings.min_ms / per_call))
    want = int(clock.agree_max(min(want, settings.max_calls)))
    want = BLOCK * math.ceil(want / BLOCK)

    # Timed: blocks in the order A B B A A B B A ... so that a linear drift cancels out.
    pending = [[] for _ in fns]
    for r in range(want // BLOCK):
        order = range(len(fns)) if r % 2 == 0 else reversed(range(len(fns)))
        for i in order:
            pending[i].append(clock.block(fns[i], BLOCK))
    calls = [[t for blk in p for t in clock.read(blk)] for p in pending]
    return {"calls": calls, "warmup_calls": len(warm[0])}
