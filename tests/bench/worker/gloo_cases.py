"""One rank of the gloo_like_nccl test: joins a gloo process group, installs bench/worker/gloo_like_nccl.py as
the rank worker does, and runs every case of CASES on real collectives.

Usage: gloo_cases.py OUT_JSON STORE_FILE, with RANK and WORLD_SIZE in the environment. Writes
{case: "ok" | the failure} for this rank. Every rank runs every case in the same order (they are
collectives); a case that fails on one rank fails there, and the others' collectives time out.
"""

import datetime
import json
import os
import sys
import traceback
from pathlib import Path

import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench" / "worker"))

import gloo_like_nccl  # noqa: E402 - after the path is set

# Read here so that the cases can name them; the test imports this file only for the list of cases.
RANK, WORLD = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
M, N = 3, 5


def piece(rank, dtype=torch.float32, shape=(M, N)):
    """Rank `rank`'s piece: values that name the rank and the element."""
    return (torch.arange(torch.Size(shape).numel(), dtype=torch.float32).view(shape) + 1000 * rank).to(dtype)


def stacked(dtype=torch.float32):
    return torch.stack([piece(r, dtype) for r in range(WORLD)])


def expect_error(kind, text, call):
    try:
        call()
    except kind as e:
        assert text in str(e), f"{kind.__name__} says {str(e)!r}, not {text!r}"
        return
    raise AssertionError(f"no {kind.__name__} ({text!r})")


def gather_stacked():
    out = torch.full((WORLD, M, N), -1.0)
    address = out.data_ptr()
    dist.all_gather_into_tensor(out, piece(RANK))
    assert out.data_ptr() == address and torch.equal(out, stacked())


def gather_flat_and_gloo_own_shape():
    flat = torch.empty(WORLD * M * N)
    dist.all_gather_into_tensor(flat, piece(RANK))
    assert torch.equal(flat, stacked().reshape(-1))
    rows = torch.empty(WORLD * M, N)
    dist.all_gather_into_tensor(rows, piece(RANK))
    assert torch.equal(rows, stacked().reshape(WORLD * M, N))


def gather_by_every_name():
    """Keywords, the name bound by `from ... import` after install, the deprecated alias, async work, bf16, complex."""
    from torch.distributed import all_gather_into_tensor
    out = torch.empty(WORLD, M, N, dtype=torch.bfloat16)
    all_gather_into_tensor(input_tensor=piece(RANK, torch.bfloat16), output_tensor=out)
    assert torch.equal(out, stacked(torch.bfloat16))
    out = torch.empty(WORLD, M, N)
    dist.distributed_c10d._all_gather_base(out, piece(RANK))
    assert torch.equal(out, stacked())
    out = torch.empty(WORLD, M, N)
    work = dist.all_gather_into_tensor(out, piece(RANK), async_op=True)
    work.wait()
    assert torch.equal(out, stacked())
    z = torch.complex(piece(RANK), -piece(RANK))
    out = torch.empty(WORLD, M, N, dtype=torch.complex64)
    dist.all_gather_into_tensor(out, z)
    assert torch.equal(out, torch.complex(stacked(), -stacked()))


def gather_scalars():
    out = torch.empty(WORLD)
    dist.all_gather_into_tensor(out, torch.tensor(float(RANK)))
    assert torch.equal(out, torch.arange(WORLD, dtype=torch.float32))


def gather_on_a_subgroup():
    """Ranks 0 and the last form a group; ranks outside it take no part (and their call does nothing)."""
    members = [0, WORLD - 1]
    group = dist.new_group(members)
    out = torch.full((2, M, N), -1.0)
    dist.all_gather_into_tensor(out, piece(RANK), group=group)
    if RANK in members:
        assert torch.equal(out, torch.stack([piece(r) for r in members]))
    else:
        assert torch.equal(out, torch.full((2, M, N), -1.0))


def gather_refuses_what_nccl_refuses():
    t = piece(RANK)
    expect_error(ValueError, "output tensor size must be equal to world_size times input tensor size",
                 lambda: dist.all_gather_into_tensor(torch.empty(WORLD + 1, M, N), t))
    expect_error(TypeError, "output tensor must have the same type as input tensor",
                 lambda: dist.all_gather_into_tensor(torch.empty(WORLD, M, N, dtype=torch.float64), t))
    expect_error(ValueError, "Tensors must be contiguous",
                 lambda: dist.all_gather_into_tensor(torch.empty(N, M * WORLD).t(), t))
    expect_error(ValueError, "Tensors must be contiguous",
                 lambda: dist.all_gather_into_tensor(torch.empty(WORLD * N, M), t.t()))


def reduce_scatter_stacked_and_flat():
    # Rank r's input block j holds piece(j) * (r + 1): rank j receives piece(j) * sum(r + 1).
    scale = WORLD * (WORLD + 1) // 2
    for shape in ((WORLD, M, N), (WORLD * M * N,)):
        inp = (stacked() * (RANK + 1)).reshape(shape)
        out = torch.empty(M, N)
        dist.reduce_scatter_tensor(out, inp)
        assert torch.equal(out, piece(RANK) * scale), f"input shaped {shape}"
    out = torch.empty(M, N)
    dist.reduce_scatter_tensor(out, (stacked() * (RANK + 1)).reshape(WORLD * M, N))
    assert torch.equal(out, piece(RANK) * scale)
    expect_error(ValueError, "input tensor must be the same size as output size times world size",
                 lambda: dist.reduce_scatter_tensor(torch.empty(M, N), torch.ones(WORLD + 1, M, N)))
    expect_error(TypeError, "input tensor must be the same type as the output tensor",
                 lambda: dist.reduce_scatter_tensor(torch.empty(M, N), torch.ones(WORLD, M, N, dtype=torch.float64)))


def gather_pieces_of_different_lengths():
    outs = [torch.full((r + 1, 2), -1.0) for r in range(WORLD)]
    dist.all_gather(outs, piece(RANK, shape=(RANK + 1, 2)))
    for r, t in enumerate(outs):
        assert torch.equal(t, piece(r, shape=(r + 1, 2))), f"rank {r}'s piece"
    outs = [torch.empty(r + 1) for r in range(WORLD)]
    dist.all_gather(outs, torch.full((RANK + 1,), float(RANK)), async_op=True).wait()
    assert all(torch.equal(t, torch.full((r + 1,), float(r))) for r, t in enumerate(outs))
    same = [torch.empty(M, N) for _ in range(WORLD)]
    dist.all_gather(same, piece(RANK))
    assert all(torch.equal(t, piece(r)) for r, t in enumerate(same))


def all_to_all_of_lists():
    # Rank r sends rank j a piece of j + 1 rows, valued 100 * r + j.
    ins = [torch.full((j + 1, 2), 100.0 * RANK + j) for j in range(WORLD)]
    outs = [torch.empty(RANK + 1, 2) for _ in range(WORLD)]
    dist.all_to_all(outs, ins)
    for r, t in enumerate(outs):
        assert torch.equal(t, torch.full((RANK + 1, 2), 100.0 * r + RANK)), f"from rank {r}"
    outs = [torch.empty(RANK + 1, 2) for _ in range(WORLD)]
    work = dist.all_to_all(outs, ins, async_op=True)
    work.wait()
    assert all(torch.equal(t, torch.full((RANK + 1, 2), 100.0 * r + RANK)) for r, t in enumerate(outs))
    expect_error(TypeError, "same dtype", lambda: dist.all_to_all(
        [torch.empty(1, dtype=torch.float64 if j == 0 else torch.float32) for j in range(WORLD)],
        [torch.ones(1) for _ in range(WORLD)]))


def reduce_leaves_non_roots_alone():
    for root in (0, WORLD - 1):
        t = piece(RANK)
        dist.reduce(t, dst=root)
        want = sum(piece(r) for r in range(WORLD)) if RANK == root else piece(RANK)
        assert torch.equal(t, want), f"root {root}"
    group = dist.new_group([0, WORLD - 1])
    t = piece(RANK)
    dist.reduce(t, group=group, group_dst=1)
    want = piece(0) + piece(WORLD - 1) if RANK == WORLD - 1 else piece(RANK)
    assert torch.equal(t, want)


CASES = [gather_stacked, gather_flat_and_gloo_own_shape, gather_by_every_name, gather_scalars, gather_on_a_subgroup,
         gather_refuses_what_nccl_refuses, reduce_scatter_stacked_and_flat, gather_pieces_of_different_lengths,
         all_to_all_of_lists, reduce_leaves_non_roots_alone]


def main():
    out_json, store = sys.argv[1:3]
    # A case that fails on one rank leaves the others in a collective: they time out and go on.
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=RANK, world_size=WORLD,
                            timeout=datetime.timedelta(seconds=20))
    gloo_like_nccl.install()
    results = {}
    for case in CASES:
        try:
            case()
            results[case.__name__] = "ok"
        except Exception:  # noqa: BLE001 - every failure is the case's result
            results[case.__name__] = traceback.format_exc()
        dist.barrier()
    Path(out_json).write_text(json.dumps(results))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
