"""torch.distributed's collectives under gloo, with NCCL's rules for what a call may pass.

On CPU the ranks join a gloo process group; on GPUs an NCCL one. A candidate is written for NCCL, and
NCCL is laxer than gloo about shapes: all_gather_into_tensor and reduce_scatter_tensor take any
contiguous buffer of W times the other's elements (a stacked (W, M, N) output, a flat one), all_gather
takes pieces of different lengths, all_to_all takes a list of pieces. Gloo refuses all of these, and
gloo's reduce leaves partial sums in a non-root rank's tensor where NCCL leaves it alone. So a candidate,
or a reference (ParallelKernelBench's allgather gathers into (W, M, N)), would get a verdict on CPU that
it does not get on a GPU.

install() replaces these functions in torch.distributed (and distributed_c10d, which its own helpers
call) by ones that hand gloo what it accepts: views of the caller's buffers where the memory layout
allows (no copy), pieces of other collectives gloo has (broadcasts, all_to_all_single) otherwise, and
NCCL's own errors for what NCCL refuses. Only the worker calls it, only under gloo, before any problem
or candidate code is imported (so `from torch.distributed import all_gather_into_tensor` gets these).
"""

import functools
import inspect

import torch
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d

_NAMES = ("all_gather_into_tensor", "reduce_scatter_tensor", "all_gather", "all_to_all", "reduce")
_originals = {name: getattr(c10d, name) for name in _NAMES}


class _Finished:
    """The work of a call made of several: waits for each, then finishes the call (copies out)."""

    def __init__(self, works, then=None):
        self._works = [w for w in works if w is not None]
        self._then = then

    def wait(self, timeout=None):
        del timeout
        for w in self._works:
            w.wait()
        self._works = []
        if self._then is not None:
            then, self._then = self._then, None
            then()
        return True

    def is_completed(self):
        return not self._works and self._then is None


def _finish(done, async_op):
    """What the collective returns: its work when asked for it, else None once it is done."""
    if async_op:
        return done
    done.wait()
    return None


def _in_group(group):
    """NCCL's and gloo's own calls warn and do nothing on a rank outside `group`: those go through as they are."""
    return dist.get_world_size(group) > 0


def _dense(t):
    """NCCL's check of a collective's single tensor (ProcessGroupNCCL's check_gpu_single_tensor, less CUDA):
    contiguous in its own memory format (a channels-last image counts)."""
    if t.is_sparse:
        raise ValueError("Tensors must be CUDA and dense")
    formats = {4: torch.channels_last, 5: torch.channels_last_3d}
    if not t.is_contiguous() and not (t.dim() in formats and t.is_contiguous(memory_format=formats[t.dim()])):
        raise ValueError("Tensors must be contiguous")


def _as_pieces(big, small, world):
    """`big` (W times `small`'s elements, contiguous) viewed as gloo wants it: (W * small.shape[0], *small.shape[1:]);
    a 0-d `small` as (1,), `big` as (W,)."""
    piece = small if small.dim() else small.view(1)
    return big.view((world * piece.shape[0],) + tuple(piece.shape[1:])), piece


def _gloo_shaped(big, small, world):
    """Whether gloo takes the pair as it is; also when a channels-last pair cannot be viewed otherwise."""
    if not (big.is_contiguous() and small.is_contiguous()):
        return True
    return small.dim() > 0 and big.dim() == small.dim() and big.shape[0] == world * small.shape[0] \
        and big.shape[1:] == small.shape[1:]


def _rebinding(name):
    """A call's arguments by name, whichever way the caller passed them, defaults filled in."""
    signature = inspect.signature(_originals[name])

    def bind(args, kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return bound.arguments
    return bind


def _one_buffer_of_w_pieces(name, big_arg, small_arg, type_error, size_error):
    """all_gather_into_tensor (big: the output) and reduce_scatter_tensor (big: the input): NCCL takes any
    contiguous `big` of W times `small`'s elements, gloo only (W * small.shape[0], *small.shape[1:])."""
    def make(bind):
        @functools.wraps(_originals[name])
        def collective(*args, **kwargs):
            a = bind(args, kwargs)
            big, small, group = a[big_arg], a[small_arg], a["group"]
            if isinstance(big, torch.Tensor) and isinstance(small, torch.Tensor) and _in_group(group):
                world = dist.get_world_size(group)
                _dense(small)
                _dense(big)
                if small.dtype != big.dtype:
                    raise TypeError(type_error)
                if small.numel() * world != big.numel():
                    raise ValueError(size_error)
                if not _gloo_shaped(big, small, world):
                    a[big_arg], a[small_arg] = _as_pieces(big, small, world)
            return _originals[name](**a)
        return collective
    return make


_all_gather_into_tensor = _one_buffer_of_w_pieces(
    "all_gather_into_tensor", "output_tensor", "input_tensor", "output tensor must have the same type as input tensor",
    "output tensor size must be equal to world_size times input tensor size")
_reduce_scatter_tensor = _one_buffer_of_w_pieces(
    "reduce_scatter_tensor", "input", "output", "input tensor must be the same type as the output tensor.",
    "input tensor must be the same size as output size times world size")


def _all_gather(bind):
    """Pieces of different shapes: NCCL broadcasts each rank's piece to the others, and so does this."""
    @functools.wraps(_originals["all_gather"])
    def all_gather(*args, **kwargs):
        a = bind(args, kwargs)
        outs, inp, group = a["tensor_list"], a["tensor"], a["group"]
        uneven = isinstance(outs, (list, tuple)) and isinstance(inp, torch.Tensor) \
            and any(isinstance(t, torch.Tensor) and t.shape != inp.shape for t in outs)
        if not uneven or not _in_group(group):
            return _originals["all_gather"](**a)
        world, me = dist.get_world_size(group), dist.get_rank(group)
        if len(outs) != world:
            raise ValueError(f"all_gather: {len(outs)} output tensors for a group of {world} ranks")
        if outs[me].shape != inp.shape:
            raise ValueError(f"all_gather: this rank's output tensor has shape {tuple(outs[me].shape)}, "
                             f"its input {tuple(inp.shape)}")
        works = []
        for r, out in enumerate(outs):
            if r == me:
                out.copy_(inp)
            works.append(dist.broadcast(out, group_src=r, group=group, async_op=True))
        return _finish(_Finished(works), a["async_op"])
    return all_gather


def _all_to_all(bind):
    """Gloo has no list all_to_all: the pieces travel flat through all_to_all_single, which it has."""
    @functools.wraps(_originals["all_to_all"])
    def all_to_all(*args, **kwargs):
        a = bind(args, kwargs)
        outs, ins, group = a["output_tensor_list"], a["input_tensor_list"], a["group"]
        if not _in_group(group):
            return _originals["all_to_all"](**a)
        dtypes = {t.dtype for t in list(outs) + list(ins)}
        if len(dtypes) != 1:
            raise TypeError("all_to_all: every input and output tensor must have the same dtype")
        flat_in = torch.cat([t.reshape(-1) for t in ins])
        sizes_out = [t.numel() for t in outs]
        flat_out = flat_in.new_empty(sum(sizes_out))
        work = dist.all_to_all_single(flat_out, flat_in, output_split_sizes=sizes_out,
                                      input_split_sizes=[t.numel() for t in ins], group=group, async_op=True)

        def copy_out():
            for t, piece in zip(outs, torch.split(flat_out, sizes_out)):
                t.copy_(piece.view(t.shape))
        return _finish(_Finished([work], copy_out), a["async_op"])
    return all_to_all


def _reduce(bind):
    """NCCL writes the result to the root's tensor only; gloo leaves partial sums in the others'."""
    @functools.wraps(_originals["reduce"])
    def reduce(*args, **kwargs):
        a = bind(args, kwargs)
        tensor, group = a["tensor"], a["group"]
        if not isinstance(tensor, torch.Tensor) or not _in_group(group):
            return _originals["reduce"](**a)
        root = a["group_dst"] if a.get("group_dst") is not None else dist.get_group_rank(
            group if group is not None else dist.group.WORLD, a["dst"])
        if dist.get_rank(group) == root:
            return _originals["reduce"](**a)
        a["tensor"] = tensor.clone()
        return _originals["reduce"](**a)
    return reduce


_WRAPPERS = {"all_gather_into_tensor": _all_gather_into_tensor, "reduce_scatter_tensor": _reduce_scatter_tensor,
             "all_gather": _all_gather, "all_to_all": _all_to_all, "reduce": _reduce}


def install():
    """Puts the NCCL-like functions in place of gloo's own, in torch.distributed and distributed_c10d."""
    for name, make in _WRAPPERS.items():
        fn = make(_rebinding(name))
        setattr(c10d, name, fn)
        setattr(dist, name, fn)
