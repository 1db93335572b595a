"""Values for the timed calls' inputs, from torch's own generators: one kernel per tensor.

Every timed call gets inputs of its own, so their cost is paid a thousand times per trial, in both
process sets: the counter hash of counter_fill takes a score of tensor operations per element (a
launch each on a GPU, ~0.4 ms per tensor; ~35 ns per element on a CPU), where a seeded generator
fills a tensor in one. What the counter hash adds is not needed here: the two sets build a timed
call's inputs in the same run, on the same devices, with the same torch, so the same seed gives the
same values in both (Philox on CUDA, the Mersenne twister on CPU); nothing of them is cached across
runs. Trials keep counter_fill: their reference outputs are cached, and must not depend on a
generator's implementation.

The fills have counter_fill's signatures and distributions; the key (secret, one per call and
stream) seeds a generator of the tensor's device. The tensor methods used are bound when this
module is imported, before any candidate code runs, so a candidate that patches them changes
nothing here.
"""

import torch

_normal = torch.Tensor.normal_
_uniform = torch.Tensor.uniform_
_random = torch.Tensor.random_
_copy = torch.Tensor.copy_
_empty = torch.empty
_Generator = torch.Generator

CHUNK = 1 << 24  # elements per temporary where the dtype has no fill of its own
_SEED_MASK = (1 << 63) - 1
_generators = {}


def _generator(device, key):
    g = _generators.get(device)
    if g is None:
        g = _generators[device] = _Generator(device=device)
    g.manual_seed(int(key) & _SEED_MASK)
    return g


def _fill(out, key, native, via, fill):
    """fill(tensor, generator) on `out` itself where its dtype allows, else through `via` temporaries
    of at most CHUNK elements (fp8, bool, complex ...), copied in."""
    g = _generator(out.device, key)
    if out.dtype in native:
        fill(out, g)
        return out
    flat = out.view(-1)
    for start in range(0, flat.numel(), CHUNK):
        piece = flat[start:start + CHUNK]
        _copy(piece, fill(_empty(piece.numel(), dtype=via, device=out.device), g))
    return out


_FLOATS = frozenset({torch.float16, torch.bfloat16, torch.float32, torch.float64})
_INTS = frozenset({torch.int16, torch.int32, torch.int64}) | _FLOATS


def fill_normal(out, key, mean=0.0, std=1.0):
    """Fills the contiguous tensor `out` with normal values (mean, std); returns it."""
    return _fill(out, key, _FLOATS, torch.float32, lambda t, g: _normal(t, mean, std, generator=g))


def fill_uniform(out, key, low=0.0, high=1.0):
    """Fills `out` with values uniform in [low, high); returns it."""
    return _fill(out, key, _FLOATS, torch.float32, lambda t, g: _uniform(t, low, high, generator=g))


def fill_integers(out, key, low, high):
    """Fills `out` with integers uniform in [low, high); returns it."""
    low, high = int(low), int(high)
    if high <= low:
        raise ValueError(f"integers need low < high, got [{low}, {high})")
    # Floats hold every integer of the range exactly only up to 2^(mantissa bits + 1).
    exact = {torch.float16: 1 << 11, torch.bfloat16: 1 << 8, torch.float32: 1 << 24, torch.float64: 1 << 53}
    native = _INTS if max(abs(low), abs(high)) <= exact.get(out.dtype, 1 << 62) else _INTS - _FLOATS
    return _fill(out, key, native, torch.int64, lambda t, g: _random(t, low, high, generator=g))
