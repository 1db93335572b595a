"""The multicast guard against Python, as a candidate would try it: ctypes with names built at run
time (joined, reversed, base64), cuGetProcAddress_v2 through ctypes, cuda-python's driver bindings
and cudart's start-up, all against the fake driver (fake_cuda.c), plus torch importing under the
guard. With --child-with-empty-environment it also runs itself again with env={}.

usage: guard_routes.py FAKE_LIBCUDA guarded|unguarded [--child-with-empty-environment] [--torch]
Prints "ok <check>" / "FAIL <check>: <why>" lines and exits 0 only if every check held.
"""
import base64
import ctypes
import glob
import os
import subprocess
import sys

REFUSAL = 801
failures = 0


def check(held, name, why):
    global failures
    print(f"ok {name}" if held else f"FAIL {name}: {why}", flush=True)
    failures += 0 if held else 1


def multicast_call(name, function, driver, guarded):
    calls = ctypes.c_int.in_dll(driver, "fake_cuda_multicast_calls")
    before = calls.value
    result = function()
    reached = calls.value - before
    if guarded:
        check(result == REFUSAL and reached == 0, name, f"returned {result}, reached the driver {reached} times")
    else:
        check(result == 0 and reached == 1, name, f"returned {result}, reached the driver {reached} times")


def main():
    fake, mode = sys.argv[1], sys.argv[2]
    guarded = mode == "guarded"
    driver = ctypes.CDLL(fake)
    names = {
        "joined": "".join(["cu", "Multi", "cast", "Create"]),
        "reversed": "ytiralunarGteGtsacitluMuc"[::-1],
        "base64": base64.b64decode("Y3VNdWx0aWNhc3RCaW5kTWVt").decode(),
    }
    for how, name in names.items():
        multicast_call(f"ctypes getattr {how} {name}", getattr(driver, name), driver, guarded)

    get_proc = driver.cuGetProcAddress_v2
    get_proc.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_uint64,
                         ctypes.POINTER(ctypes.c_int)]
    pointer, status = ctypes.c_void_p(), ctypes.c_int()
    get_proc(b"cuMulticast" + b"AddDevice", ctypes.byref(pointer), 12010, 0, ctypes.byref(status))
    multicast_call("ctypes cuGetProcAddress_v2 cuMulticastAddDevice", ctypes.CFUNCTYPE(ctypes.c_int)(pointer.value),
                   driver, guarded)

    value = ctypes.c_int(-1)
    driver.cuDeviceGetAttribute(ctypes.byref(value), 132, 0)
    check(value.value == (0 if guarded else 1), "ctypes cuDeviceGetAttribute MULTICAST_SUPPORTED",
          f"read {value.value}")

    try:
        from cuda.bindings import driver as cuda_driver
    except ImportError as e:
        print(f"skip cuda-python: {e}")
    else:
        cuda_driver.cuInit(0)
        calls = ctypes.c_int.in_dll(driver, "fake_cuda_multicast_calls").value
        result = cuda_driver.cuMulticastCreate(cuda_driver.CUmulticastObjectProp())[0]
        reached = ctypes.c_int.in_dll(driver, "fake_cuda_multicast_calls").value - calls
        expected = cuda_driver.CUresult.CUDA_ERROR_NOT_SUPPORTED if guarded else cuda_driver.CUresult.CUDA_SUCCESS
        check(result == expected and reached == (0 if guarded else 1), "cuda-python cuMulticastCreate",
              f"returned {result}, reached the driver {reached} times")
        attribute = cuda_driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED
        check(cuda_driver.cuDeviceGetAttribute(attribute, 0)[1] == (0 if guarded else 1),
              "cuda-python cuDeviceGetAttribute MULTICAST_SUPPORTED", "wrong value")

    # cudart's start-up looks its driver up with dlsym and cuGetProcAddress; the fake cannot
    # satisfy the rest of it, so only the log (read by the test) shows what it reached.
    runtimes = [p for d in sys.path for p in glob.glob(os.path.join(d, "nvidia", "cu*", "lib", "libcudart.so.*"))]
    if runtimes:
        count = ctypes.c_int()
        ctypes.CDLL(runtimes[0]).cudaGetDeviceCount(ctypes.byref(count))
        print(f"cudart started: {runtimes[0]}")

    if "--torch" in sys.argv:
        try:
            import torch
        except ImportError as e:
            print(f"skip torch: {e}")
        else:
            check(float(torch.arange(4.0).sum()) == 6.0, "torch on CPU under the guard", "wrong sum")

    if "--child-with-empty-environment" in sys.argv:
        child = subprocess.run([sys.executable, __file__, fake, mode], env={}, capture_output=True, text=True)
        print(child.stdout, end="")
        check(child.returncode == 0, "python child with env={}", child.stderr[-2000:])

    calls = ctypes.c_int.in_dll(driver, "fake_cuda_multicast_calls").value
    if guarded:
        check(calls == 0, "no multicast call reached the driver", f"{calls} did")
    print(f"pid {os.getpid()}")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
