# Binds a multicast object through the CUDA driver's multicast API (via ctypes). The judge must
# refuse it from its source, before it runs: its module-level code raises, which would turn into a
# compile_error verdict if it ever ran.
import ctypes

raise RuntimeError("this candidate must never be run: the judge refuses it from its source")

_cuda = ctypes.CDLL("libcuda.so.1")


class _McProp(ctypes.Structure):
    _fields_ = [("numDevices", ctypes.c_uint), ("size", ctypes.c_size_t), ("handleTypes", ctypes.c_ulonglong),
                ("flags", ctypes.c_ulonglong)]


def solution(tensor):
    handle = ctypes.c_ulonglong()
    prop = _McProp(2, tensor.numel() * tensor.element_size(), 1, 0)
    _cuda.cuMulticastCreate(ctypes.byref(handle), ctypes.byref(prop))
    return tensor
