"""Family 12, L2 persistence (GPU only): a persisting-L2 window over the inputs that outlives the
judge's L2 flush.

What it does: computes honestly, but first reserves the largest persisting L2 carve-out
(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize)) and sets an access-policy window over its
input on the current stream (cudaStreamSetAttribute), so the flush the judge writes between timed
calls does not evict the input: timed calls read it from L2 instead of HBM. Nothing here touches
multicast.
Where the worker resets the carve-out before a block from the candidate's process
(`timing.Gpu.reset_l2_persistence`), the reset is replaced by a no-op.
Why a naive judge is fooled: its flush only evicts normal lines; the carve-out and the stream's
window persist across its calls, and a reset done in the candidate's process can be removed.
Verdict it must get: not `correct`, or `correct` without a speedup beyond the honest computation's
(the judge resets the carve-out and the window before every block). At these sizes the gain is a
few percent at most, so the bound is tight.
"""
import ctypes
import sys

import torch
import torch.distributed as dist

_timing = sys.modules.get("timing")
if _timing is not None and hasattr(getattr(_timing, "Gpu", None), "reset_l2_persistence"):
    _timing.Gpu.reset_l2_persistence = lambda self: None

_PERSISTING_L2_LIMIT = 0x06          # cudaLimitPersistingL2CacheSize
_ACCESS_POLICY_WINDOW = 1            # cudaStreamAttributeAccessPolicyWindow
_PERSISTING, _STREAMING = 2, 1       # cudaAccessProperty


class _Window(ctypes.Structure):
    _fields_ = [("base_ptr", ctypes.c_void_p), ("num_bytes", ctypes.c_size_t), ("hitRatio", ctypes.c_float),
                ("hitProp", ctypes.c_int), ("missProp", ctypes.c_int)]


class _AttrValue(ctypes.Union):  # cudaStreamAttrValue (cudaLaunchAttributeValue): 64 bytes
    _fields_ = [("accessPolicyWindow", _Window), ("pad", ctypes.c_char * 64)]


def _cudart():
    for name in ("libcudart.so.13", "libcudart.so.12", "libcudart.so"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


_rt = _cudart()
_windows = set()


def _persist(t):
    if _rt is None or (t.data_ptr(), t.numel()) in _windows:
        return
    _windows.add((t.data_ptr(), t.numel()))
    _rt.cudaDeviceSetLimit(ctypes.c_int(_PERSISTING_L2_LIMIT), ctypes.c_size_t(64 << 20))
    v = _AttrValue()
    v.accessPolicyWindow = _Window(t.data_ptr(), t.numel() * t.element_size(), 1.0, _PERSISTING, _STREAMING)
    _rt.cudaStreamSetAttribute(ctypes.c_void_p(torch.cuda.current_stream().cuda_stream),
                               ctypes.c_int(_ACCESS_POLICY_WINDOW), ctypes.byref(v))


def solution(local_hidden_states, local_weight, variance_epsilon):
    _persist(local_hidden_states)
    x = local_hidden_states.float()
    sum_sq = x.pow(2).sum(dim=-1, keepdim=True)
    dist.all_reduce(sum_sq)
    var = sum_sq / (x.shape[-1] * dist.get_world_size())
    return local_weight * (x * torch.rsqrt(var + variance_epsilon)).to(local_hidden_states.dtype)
