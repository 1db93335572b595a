"""Runs one timed block of calls on this rank: the mechanics only; every decision is the judge's.

The judge (C++, outside every sandbox) decides how many blocks run, in which order the reference's
and the candidate's process sets take turns (A B B A A B ...), how long the GPU spins before a block,
and which calls are checked. This module executes one block as it is told and reports what the clock
said; what a candidate's process reports is a claim that the judge cross-checks against its own
wall-clock of the block.

A GPU block: reset the L2 persisting carve-out, hold the GPU for `hold_ms` (the host enqueues the
whole block meanwhile, so no timed call waits for a launch), then one device-side barrier (a
one-element all-reduce on the stream) and one L2 flush (a write of twice the L2 size), then the
calls back to back, each between its CUDA events and followed by a copy of its outputs (so a checked
call is judged on what it returned, even if a later call reuses the buffer). The block runs on the
device's default stream and its events are recorded there: a call that leaves another stream current
has that stream's work joined into its end event, and the default stream made current again. Every
call's inputs were made before the flush, so each call still reads them cold; one barrier and one
flush per block rather than per call keep the untimed mechanics small beside microsecond calls,
where they would otherwise be many times the calls and their jitter the larger part of what the
judge compares. The hold and the flush hold every multiprocessor (whole_gpu.py): once they are
resident no kernel of another stream runs beside them, and one still running when they start delays
them. Besides each call's time the block reports its span, from the end of the hold to the last
call's end: what the span holds beyond the calls (the barrier, the flush and the copies, the same in
both sets) is compared between the sets by the judge. The block ends with a device-wide
synchronisation, so work left on any stream of this process is inside the judge's wall-clock.

The functions used here are bound when this module is imported, before any candidate code runs.
"""

import ctypes
import threading
import time

import torch
import torch.distributed as dist

import whole_gpu

_Event = torch.cuda.Event
_record = torch.cuda.Event.record
_elapsed = torch.cuda.Event.elapsed_time
_synchronize = torch.cuda.synchronize
_all_reduce = dist.all_reduce
_barrier = dist.barrier
_perf_counter = time.perf_counter
_spin = getattr(torch.cuda, "_sleep", None)  # spins one GPU thread for a number of clock cycles
_current_stream = torch.cuda.current_stream
_set_stream = torch.cuda.set_stream
_default_stream = torch.cuda.default_stream
_active_threads = threading.active_count

_CUDA_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06


def _cudart():
    """The CUDA runtime torch loaded (by soname, so dlopen returns the loaded copy); None if absent."""
    for name in ("libcudart.so.13", "libcudart.so.12", "libcudart.so"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


class Gpu:
    """The GPU clock of one rank."""

    def __init__(self, device):
        self.device = torch.device(device)
        l2 = getattr(torch.cuda.get_device_properties(self.device), "L2_cache_size", 0) or (50 << 20)
        self.flush_buf = torch.empty(2 * l2, dtype=torch.uint8, device=self.device)
        self.bar = torch.zeros(1, dtype=torch.float32, device=self.device)
        self.cycles_per_ms = self._spin_rate()
        try:
            index = self.device.index if self.device.index is not None else torch.cuda.current_device()
            self._whole = whole_gpu.WholeGpu(index)
            self.hold_kind = "every multiprocessor"
        except whole_gpu.Unavailable as e:  # torch's spin and memset still keep launches out of the calls
            self._whole = None
            self.hold_kind = f"one thread ({e})"
        rt = _cudart()
        self._set_limit = getattr(rt, "cudaDeviceSetLimit", None) if rt else None
        self._reset_persisting = getattr(rt, "cudaCtxResetPersistingL2Cache", None) if rt else None

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

    def reset_l2_persistence(self):
        """No persisting L2 lines survive into a block: a persisting window set by earlier code
        would keep inputs in L2 through the flush."""
        if self._set_limit is not None:
            self._set_limit(ctypes.c_int(_CUDA_LIMIT_PERSISTING_L2_CACHE_SIZE), ctypes.c_size_t(0))
        if self._reset_persisting is not None:
            self._reset_persisting()

    def block(self, calls, hold_ms, keep):
        """Runs `calls` (callables) as one timed block; keep(i, result) sees each call's result
        after its end event. Returns (per-call ms, host enqueue ms, span ms)."""
        self.reset_l2_persistence()
        # Every block on the device's default stream, whatever stream earlier code left current.
        own = _default_stream(self.device)
        _set_stream(own)
        stream = own.cuda_stream
        if hold_ms > 0:
            if self._whole is not None:
                self._whole.hold(hold_ms, stream)
            elif self.cycles_per_ms > 0:
                _spin(int(hold_ms * self.cycles_per_ms))
        events = [(_Event(enable_timing=True), _Event(enable_timing=True)) for _ in calls]
        start = _Event(enable_timing=True)
        _record(start, own)
        t0 = _perf_counter()
        _all_reduce(self.bar)
        if self._whole is not None:
            self._whole.flush(self.flush_buf, stream)
        else:
            self.flush_buf.zero_()
        pairs = []
        for i, call in enumerate(calls):
            s, e = events[i]
            _record(s, own)
            out = call()
            # A call that left another stream current: its work joins the end event, and the
            # judge's stream is current again for the next call and the commitments.
            left = _current_stream(self.device)
            if left.cuda_stream != stream:
                own.wait_stream(left)
                _set_stream(own)
            _record(e, own)
            keep(i, out)
            pairs.append((s, e))
        enqueue_ms = (_perf_counter() - t0) * 1e3
        _synchronize(self.device)
        span_ms = _elapsed(start, pairs[-1][1]) if pairs else 0.0
        return [_elapsed(s, e) for s, e in pairs], enqueue_ms, span_ms


class Cpu:
    """The host clock of one rank (gloo): a barrier before each call, the wall-clock of the call."""

    def reset_l2_persistence(self):
        pass

    def block(self, calls, hold_ms, keep):
        del hold_ms
        times = []
        t0 = _perf_counter()
        for i, call in enumerate(calls):
            _barrier()
            s = _perf_counter()
            out = call()
            times.append((_perf_counter() - s) * 1e3)
            keep(i, out)
        span_ms = (_perf_counter() - t0) * 1e3
        return times, span_ms, span_ms


def clock_for(device):
    return Gpu(device) if device.startswith("cuda") else Cpu()


def active_threads():
    return _active_threads()


def graphed(fn, static_args, device):
    """Captures fn(*static_args) into a CUDA graph; returns (replay, the captured output)."""
    stream = torch.cuda.Stream(device=device)
    stream.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn(*static_args)
    torch.cuda.current_stream(device).wait_stream(stream)
    _synchronize(device)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn(*static_args)
    _synchronize(device)
    return graph.replay, out
