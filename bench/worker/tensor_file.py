"""Writes a rank's results (any nest of tensors, tuples, lists, dicts and plain values) to one file.

The layout is safetensors' (8-byte little-endian header length, a JSON header naming each tensor's
dtype, shape and byte range, then the raw bytes), so the files open with the safetensors library.
The nesting goes into the header's __metadata__ as JSON (the node kinds: bench/eval/tensor_file.h).
The judge reads these files in C++: the comparison never unpickles anything a candidate wrote.
Hand-written because the safetensors package is not on the GPU host and writing the layout takes a
few lines.

A value the judge cannot compare (a module, a function, a sparse layout other than COO, a tensor of an
unsupported dtype ...) is refused with Unrecordable, which names where in the tree it is.
"""

import json
import math
import struct

import counter_fill
import torch
import torch.distributed as dist

_DTYPE_NAMES = {
    torch.bool: "BOOL",
    torch.uint8: "U8",
    torch.int8: "I8",
    torch.int16: "I16",
    torch.int32: "I32",
    torch.int64: "I64",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.float32: "F32",
    torch.float64: "F64",
    torch.complex64: "C64",
    torch.complex128: "C128",
}
for _name, _code in (("float8_e4m3fn", "F8_E4M3"), ("float8_e5m2", "F8_E5M2"), ("uint16", "U16"),
                     ("uint32", "U32"), ("uint64", "U64")):
    if hasattr(torch, _name):
        _DTYPE_NAMES[getattr(torch, _name)] = _code


class Unrecordable(TypeError):
    """A value the judge could not compare; the message names its place ("output[1]", "input[2]")."""


class Digest:
    """A tensor recorded by its digest (large inputs): dtype, shape and a hash of its bytes."""

    def __init__(self, tensor, hash_text):
        self.dtype = dtype_code(tensor.dtype, "a digested tensor")
        self.shape = list(tensor.shape)
        self.hash = hash_text

    def __eq__(self, other):
        return isinstance(other, Digest) and (self.dtype, self.shape, self.hash) == (other.dtype, other.shape,
                                                                                       other.hash)


def dtype_code(dtype, where):
    if dtype not in _DTYPE_NAMES:
        raise Unrecordable(f"{where}: a tensor of dtype {dtype}, which the judge cannot compare")
    return _DTYPE_NAMES[dtype]


def group_ranks(group):
    """The global ranks of a process group (WORLD included), or None when `group` is not one. A group
    is recorded by its ranks: its repr carries an address."""
    ranks = getattr(group, "ranks", None)  # stand-in groups of the no-dist tests
    if isinstance(ranks, (list, tuple)):
        return list(ranks)
    if isinstance(group, dist.ProcessGroup) and dist.is_initialized():
        return dist.get_process_group_ranks(group)
    return None


def _tensor_bytes(t):
    t = t.detach().to("cpu").contiguous().reshape(-1)
    if t.is_complex():
        t = torch.view_as_real(t).reshape(-1)
    return t.view(torch.uint8).numpy().tobytes()


def _plain(x):
    """A JSON form of a plain value; floats that JSON cannot hold (nan, inf) travel as text."""
    if isinstance(x, float) and not math.isfinite(x):
        return {"float": repr(x)}
    return {"value": x}


def _encode(x, tensors, where):
    if isinstance(x, torch.Tensor):
        if x.layout == torch.sparse_coo:
            x = x.coalesce()
            return {"sparse_coo": {"size": list(x.shape),
                                   "indices": _encode(x.indices(), tensors, where + ".indices"),
                                   "values": _encode(x.values(), tensors, where + ".values")}}
        if x.layout != torch.strided:
            raise Unrecordable(f"{where}: a tensor of layout {x.layout}, which the judge cannot compare: pass "
                               "its parts (indices and values) as dense tensors")
        dtype_code(x.dtype, where)
        name = f"t{len(tensors)}"
        tensors.append((name, x))
        return {"tensor": name}
    if isinstance(x, Digest):
        return {"digest": {"dtype": x.dtype, "shape": x.shape, "hash": x.hash}}
    if isinstance(x, torch.Size):
        return {"size": list(x)}
    if isinstance(x, tuple):
        return {"tuple": [_encode(v, tensors, f"{where}[{i}]") for i, v in enumerate(x)]}
    if isinstance(x, list):
        return {"list": [_encode(v, tensors, f"{where}[{i}]") for i, v in enumerate(x)]}
    if isinstance(x, dict):
        return {"dict": [[_encode(k, tensors, f"{where}<key>"), _encode(v, tensors, f"{where}[{k!r}]")]
                         for k, v in x.items()]}
    if x is None or isinstance(x, (bool, int, float, str)):
        return _plain(x)
    if isinstance(x, (torch.dtype, torch.device)):
        return {"repr": str(x)}
    ranks = group_ranks(x)
    if ranks is not None:
        return {"group": ranks}
    raise Unrecordable(f"{where}: a {type(x).__module__}.{type(x).__qualname__}, which the judge cannot record or "
                       "compare: pass tensors and plain values (a module's weight and bias tensors, a sparse "
                       "tensor's indices and values)")


def check(obj, where):
    """Raises Unrecordable, naming the place, when `obj` holds a value the judge cannot compare."""
    _encode(obj, [], where)


def commitment(obj):
    """What a timed call commits to before the judge names the call it checks: per tensor of
    `obj`, in the order write() records them, counter_fill.commit_sums of its bytes (device work,
    not yet finished: pass them to counter_fill.commits_of once it is done). Raises Unrecordable as
    write() does."""
    tensors = []
    _encode(obj, tensors, "output")
    return [counter_fill.commit_sums(t) for _, t in tensors]


def write(path, trees):
    """Writes `trees` (a dict of name -> object, e.g. {"output": out, "inputs": args}) to `path`.
    Raises Unrecordable, naming the place, for a value the judge cannot compare."""
    tensors = []
    root_names = {"inputs": "input", "in_place": "input"}
    meta = {name: _encode(obj, tensors, root_names.get(name, name)) for name, obj in trees.items()}
    header = {"__metadata__": {"tree": json.dumps(meta)}}
    blobs = []
    offset = 0
    for name, t in tensors:
        data = _tensor_bytes(t)
        header[name] = {"dtype": _DTYPE_NAMES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for b in blobs:
            f.write(b)
