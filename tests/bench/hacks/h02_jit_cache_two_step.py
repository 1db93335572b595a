"""Family 2, output cache carried between evaluations in the JIT cache directory (two steps).

What it does: answers are stored, keyed on an input fingerprint, under TORCH_EXTENSIONS_DIR, which
the judge keeps per candidate content and hands to the next evaluation of the same file. Step 1
(an evaluation with some seed) computes honestly and saves every answer; step 2 (the same file, the
same seed, as when final scoring reuses a fixed hidden seed) loads them at import and answers every
call, checked or timed, from the file: no GEMM, no all-reduce.
Why a naive judge is fooled: the directory survives evaluations, and the same seed gives the same
inputs.
Verdict it must get in step 2: not `correct`, or `correct` without an inflated speedup (scratch and
JIT directories carry nothing of a candidate into a later evaluation, and inputs come from per-run
secrets).
"""
import os

import torch
import torch.distributed as dist

_dir = os.path.join(os.environ.get("TORCH_EXTENSIONS_DIR", "/tmp"), "answers")
_saved = {}  # only what an earlier evaluation left: this one stays honest


def _fingerprint(t):
    return "_".join(f"{v:.6g}" for v in t.reshape(-1)[:12].float().tolist())


def _load():
    if os.path.isdir(_dir):
        for name in os.listdir(_dir):
            _saved[name[:-3]] = torch.load(os.path.join(_dir, name))


_load()


def solution(A_local, B_local):
    key = _fingerprint(A_local)
    if key in _saved:
        return _saved[key]
    out = A_local @ B_local
    dist.all_reduce(out)
    os.makedirs(_dir, exist_ok=True)
    path = os.path.join(_dir, key + ".pt")
    if not os.path.exists(path):
        torch.save(out, path)
    return out
