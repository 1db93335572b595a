"""Counter-based values and digests, computed on the tensor's own device.

Element i of a stream is a hash of (the stream's 64-bit key, i): no RNG state is read or changed, any
slice of a tensor can be made without the rest (huge inputs are filled chunk by chunk, on the GPU,
without host memory), and the integer bits are the same on every device. Floats come from the bits
through the inverse normal CDF, which CPU and CUDA may round differently in the last place: the
reference outputs are cached per device kind anyway.

The values hash is a few rounds of multiplication modulo the prime 2^31 - 1 with xor-shifts between
them: every round is a handful of tensor operations, and each timed call's inputs are filled anew, so
the number of operations per element is what an evaluation pays for its inputs. The digest of a
tensor's bytes (for inputs too large to record in full) and the commitment to a call's outputs use a
32-bit xor-shift-multiply mixer. Neither is a cryptographic hash: a stream's key is secret and every
call has its own, and they are checksums against accidental and casual change.

Hand-written because torch's own generators are neither counter-addressable nor identical across
devices, and a table of 10^10 elements must not pass through the host. Integer arithmetic stays below
2^63 (products of 31-bit values, 32-bit multiplications split into 16-bit halves), so nothing relies
on overflow.
"""

import hashlib
import math

import torch

_MASK32 = 0xFFFFFFFF
CHUNK = 1 << 24  # elements per step: a few 128 MiB temporaries at most


def stream_key(*parts):
    """A 64-bit key from any printable parts (seed, problem, rank, trial, call, stream name)."""
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def _mul32(x, c):
    """(x * c) mod 2^32 for int64 tensors x < 2^32 and a constant c < 2^32, without overflow."""
    lo, hi = c & 0xFFFF, c >> 16
    return (x * lo + (((x * hi) & 0xFFFF) << 16)) & _MASK32


def _mix32(x):
    """A 32-bit integer hash with full avalanche (xor-shift-multiply; constants from the public
    hash-prospector search)."""
    x = x ^ (x >> 16)
    x = _mul32(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = _mul32(x, 0x846CA68B)
    return x ^ (x >> 16)


_P = 0x7FFFFFFF  # 2^31 - 1, a prime: x -> x * a mod P is a bijection of [1, P) for every a in [1, P)
_ROUNDS = (742938285, 950706376, 1226874159)  # multipliers mod P with a good lattice (Fishman and Moore)
BITS = 31  # a value of _bits is uniform in [0, 2^31)


def _round(x, a):
    """One mixing round of 31-bit values: a multiplication modulo P, then an xor-shift."""
    x = (x * a) % _P
    return x ^ (x >> 15)


def _bits(key, lane, counters):
    """31 random bits per counter (an int64 tensor of element indices) for `key` and `lane`."""
    k0 = (key ^ (0x9E3779B9 * (lane + 1))) & _P
    k1 = (key >> 32) & _P
    x = _round((counters & _P) ^ k0, _ROUNDS[0])
    x = _round(x ^ (counters >> 31) ^ k1, _ROUNDS[1])
    return _round(x, _ROUNDS[2])


def _unit(bits):
    """Uniform floats in (0, 1) from 31-bit ints: 23 bits, so that the largest, 1 - 2^-24, and 2u - 1 are
    exact in float32 (with 24 bits it would round to 1, and the inverse normal CDF to infinity)."""
    return ((bits >> (BITS - 23)).to(torch.float32) + 0.5) * (1.0 / (1 << 23))


def _chunks(out):
    flat = out.view(-1)
    for start in range(0, flat.numel(), CHUNK):
        stop = min(start + CHUNK, flat.numel())
        yield flat[start:stop], torch.arange(start, stop, dtype=torch.int64, device=out.device)


def fill_normal(out, key, mean=0.0, std=1.0):
    """Fills the contiguous tensor `out` with normal values (the inverse CDF of a uniform); returns it."""
    for piece, counters in _chunks(out):
        z = torch.erfinv(_unit(_bits(key, 0, counters)) * 2.0 - 1.0) * math.sqrt(2.0)
        piece.copy_(z * std + mean)
    return out


def fill_uniform(out, key, low=0.0, high=1.0):
    """Fills `out` with values uniform in [low, high); returns it."""
    for piece, counters in _chunks(out):
        piece.copy_(_unit(_bits(key, 0, counters)) * (high - low) + low)
    return out


def fill_integers(out, key, low, high):
    """Fills `out` with integers uniform in [low, high) (31 or, for ranges over 2^24, 62 random bits,
    modulo the range); returns it."""
    span = int(high) - int(low)
    if span <= 0:
        raise ValueError(f"integers need low < high, got [{low}, {high})")
    for piece, counters in _chunks(out):
        wide = _bits(key, 0, counters)
        if span > 1 << 24:  # keep the modulo bias negligible for wide ranges: 62 bits
            wide = (wide << BITS) | _bits(key, 1, counters)
        piece.copy_(wide % span + int(low))
    return out


_COMMIT_SALTS = (0x2545F491, 0x9E3779B9)
_commit_keys = {}


def _commit_key(n, device):
    """The two per-position keys of the first n 16-bit words (int16), stacked as (2, n), made once per
    size and device."""
    key = (n, str(device))
    if key not in _commit_keys:
        pos = torch.arange(n, dtype=torch.int64, device=device)
        # The low 16 bits as a signed 16-bit value (the same bits).
        _commit_keys[key] = torch.stack([(((_mix32(pos ^ salt) + 0x8000) & 0xFFFF) - 0x8000).to(torch.int16)
                                         for salt in _COMMIT_SALTS])
    return _commit_keys[key]


def commit_sums(t):
    """A commitment to a tensor's exact bytes, computed where it lives without a host sync: its
    bytes as zero-padded little-endian 16-bit signed words w_j, and for two per-position keys k_j
    (the low 16 bits of mix32(j ^ salt)) the sum of (w_j xor k_j), in int64. Only the bytes give it
    (xor makes every element count on its own); it is cheap (one xor and one sum over both keys at
    once), not a cryptographic hash. Returns (byte count, an int64 device tensor of the two sums);
    finish with commits_of. bench/eval/output_commit.cc computes the same from a recorded file."""
    t = t.detach()
    if t.is_complex():
        t = torch.view_as_real(t)
    raw = t.contiguous().reshape(-1).view(torch.uint8)
    n = raw.numel()
    if n % 2 or raw.storage_offset() % 2:
        padded = torch.zeros(n + n % 2, dtype=torch.uint8, device=raw.device)
        padded[:n] = raw
        raw = padded
    words = raw.view(torch.int16)
    return n, (words.unsqueeze(0) ^ _commit_key(words.numel(), words.device)).sum(dim=1)


def commits_of(calls):
    """[bytes, s0, s1] per tensor per call, from lists of commit_sums' results: the sums of every
    call are read together, one device sync per device, not one per tensor."""
    by_device = {}
    for call in calls:
        for _, sums in call:
            by_device.setdefault(sums.device, []).append(sums)
    values = {d: iter(torch.stack(s).tolist()) for d, s in by_device.items()}
    return [[[n, *next(values[sums.device])] for n, sums in call] for call in calls]


def digest(t, key=0x5EED):
    """A digest of a tensor's dtype, shape and bytes, computed where the tensor lives: two 32-bit hashes
    of each 4-byte word keyed by its position, summed, then hashed with the shape and dtype."""
    t = t.detach()
    if t.is_complex():
        t = torch.view_as_real(t)
    raw = t.contiguous().view(-1).view(torch.uint8)
    whole = raw.numel() // 4 * 4
    words = raw[:whole].view(torch.int32).to(torch.int64) & _MASK32
    tail = raw[whole:].to(torch.int64)
    sums = [0, 0]
    for part, offset in ((words, 0), (tail, words.numel())):
        for start in range(0, part.numel(), CHUNK):
            w = part[start:start + CHUNK]
            counters = torch.arange(offset + start, offset + start + w.numel(), dtype=torch.int64, device=w.device)
            keyed = w ^ _bits(key, 0, counters)
            sums[0] += int(_mix32(keyed).sum().item())
            sums[1] += int(_mix32(keyed ^ 0x5BD1E995).sum().item())
    text = f"{t.dtype}/{tuple(t.shape)}/{raw.numel()}/{sums[0]}/{sums[1]}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]
