"""Family 16, forbidden hardware path: the driver's multi-cast entry points reached through names
built at run time.

What it does: computes honestly, but first builds the names of the CUDA driver's multi-cast object
API and of torch symmetric memory's multi-mem all-reduce from character codes (so no text scan of
the source or of the files the run leaves can see them) and resolves them: dlsym through ctypes in
libcuda and in the process itself, getattr on torch.ops.symm_mem. It only resolves them and never
calls anything; on the CPU there is no driver to call. A real candidate would call what it resolved.
Why a naive judge is fooled: a static scan finds names, not the strings a program assembles.
Verdict it must get: `forbidden` (a run-time guard on the entry points the candidate's process
resolves refuses them before any GPU is touched).
NEVER change this file to call what it resolves.
"""
import ctypes

import torch
import torch.distributed as dist

_DRIVER = "".join(map(chr, (99, 117, 77, 117, 108, 116, 105, 99, 97, 115, 116, 67, 114, 101, 97, 116, 101)))
_SYMM = "".join(map(chr, (109, 117, 108, 116, 105, 109, 101, 109, 95, 97, 108, 108, 95, 114, 101, 100, 117, 99,
                          101, 95)))
_resolved = []


def _resolve():
    for lib in ("libcuda.so.1", "libcuda.so", None):
        try:
            handle = ctypes.CDLL(lib)
        except OSError:
            continue
        try:
            _resolved.append(getattr(handle, _DRIVER))  # resolved only, never called
        except AttributeError:
            pass
    try:
        _resolved.append(getattr(torch.ops.symm_mem, _SYMM))  # resolved only, never called
    except (AttributeError, RuntimeError):
        pass


_resolve()


def solution(tensor):
    out = tensor.clone()
    dist.all_reduce(out)
    return out
