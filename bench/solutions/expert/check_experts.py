"""Checks the expert solutions of bench/solutions/expert against the references on this machine's GPUs.

Standalone (torch.distributed over NCCL, one process per GPU, started with torch.multiprocessing), for
use until `pkagent eval` runs them: for each problem, the inputs of its inputs.py and random inputs of
the same shapes (fresh seeds), reference and expert compared with the problem's atol/rtol; then both
timed the way PKB does (per rank: warm-up, then events around back-to-back calls cycling through input
copies, mean per call; max over ranks).

    python3 bench/solutions/expert/check_experts.py --ids 1-8,13,16 --json out.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import socket
import sys
import tomllib
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

HERE = Path(__file__).resolve().parent
PROBLEMS = HERE.parents[1] / "problems"
sys.path.insert(0, str(HERE.parents[2] / "kernels_runtime" / "python"))  # kr_torch, as `pkagent eval` offers it
sys.path.insert(0, str(HERE.parents[1] / "worker"))  # problem_api: what make_inputs receives

import problem_api  # noqa: E402 - after the path is set


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def clone_args(args):
    return tuple(a.clone() if torch.is_tensor(a) else a for a in args)


def randomised(args, seed: int, rank: int):
    """The same arguments with every floating tensor refilled with random values (per rank)."""
    g = torch.Generator(device="cpu").manual_seed(seed * 1000 + rank)
    out = []
    for a in args:
        if torch.is_tensor(a) and a.is_floating_point():
            out.append(torch.randn(a.shape, generator=g).to(dtype=a.dtype, device=a.device))
        else:
            out.append(a)
    return tuple(out)


def same(got, want, atol: float, rtol: float) -> tuple[bool, float]:
    if torch.is_tensor(want):
        if not torch.is_tensor(got) or got.shape != want.shape:
            return False, float("inf")
        diff = (got.float() - want.float()).abs().max().item() if want.numel() else 0.0
        return torch.allclose(got.float(), want.float(), atol=atol, rtol=rtol), diff
    if isinstance(want, (list, tuple)):
        results = [same(g, w, atol, rtol) for g, w in zip(got, want)]
        return len(got) == len(want) and all(r[0] for r in results), max((r[1] for r in results), default=0.0)
    return got == want, 0.0


def time_calls(fn, args, world_max, warmup: int = 20, iters: int = 200) -> float:
    """Mean ms per call on this rank (PKB's method: cycling input copies, no barrier), max over ranks."""
    groups = [clone_args(args) for _ in range(8)]
    for i in range(warmup):
        fn(*groups[i % len(groups)])
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(iters):
        fn(*groups[i % len(groups)])
    stop.record()
    torch.cuda.synchronize()
    return world_max(start.elapsed_time(stop) / iters)


def worker(rank: int, world: int, port: int, ids: list[int], seeds: list[int], out_path: str):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world),
                      LOCAL_RANK=str(rank))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", rank))

    def world_max(v: float) -> float:
        t = torch.tensor([v], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return t.item()

    rows = []
    for pid in ids:
        pdir = next(PROBLEMS.glob(f"{pid}_*"))
        meta = tomllib.loads((pdir / "problem.toml").read_text())
        ref = load(pdir / "reference.py", f"reference_{pid}")
        inputs = load(pdir / "inputs.py", f"inputs_{pid}")
        sol = load(HERE / f"{pdir.name}.py", f"expert_{pid}")
        problem = problem_api.Problem({"id": meta["id"], "name": pdir.name, "dtype": meta["dtype"],
                                       "shape": meta["shape"]})

        def make(trial, seed):
            draw = problem_api.Draw(trial, problem_api.derived_seeds(seed, rank, trial))
            return problem_api.Inputs(problem, inputs, rank, world, f"cuda:{rank}").build(draw)

        ok, worst, trials = True, 0.0, 0
        for trial, seed in enumerate(seeds):
            base = make(trial, seed)
            for args in (base, randomised(base, seed, rank)):
                want = ref.solution(*clone_args(args))
                got = sol.solution(*clone_args(args))
                torch.cuda.synchronize()
                good, diff = same(got, want, meta["atol"], meta["rtol"])
                flags = torch.tensor([0.0 if good else 1.0, diff], device="cuda")
                dist.all_reduce(flags, op=dist.ReduceOp.MAX)
                ok &= flags[0].item() == 0.0
                worst = max(worst, flags[1].item())
                trials += 1
        args = make(0, seeds[0])
        t_ref = time_calls(ref.solution, args, world_max)
        t_sol = time_calls(sol.solution, args, world_max)
        rows.append({"id": pid, "problem": pdir.name, "correct": ok, "trials": trials, "max_abs_diff": worst,
                     "reference_ms": t_ref, "expert_ms": t_sol, "speedup": t_ref / t_sol})
        if rank == 0:
            r = rows[-1]
            print(f"{r['problem']:<18} {'correct' if ok else 'WRONG':<8} {trials} inputs  max|diff| {worst:.3g}  "
                  f"reference {t_ref * 1e3:8.1f} us  expert {t_sol * 1e3:8.1f} us  speedup {r['speedup']:.2f}x",
                  flush=True)
    if rank == 0 and out_path:
        Path(out_path).write_text(json.dumps({"world": world, "rows": rows}, indent=2) + "\n")
    torch.cuda.synchronize()
    dist.barrier()
    dist.destroy_process_group()
    if not all(r["correct"] for r in rows):
        sys.exit(3)


def parse_ids(text: str) -> list[int]:
    ids = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        ids += list(range(int(a), int(b or a) + 1))
    return ids


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ids", default="1-8,13,16", help="problem ids, e.g. 1-8 or 1,7")
    ap.add_argument("--seeds", default="11,4242,90001", help="comma-separated seeds (one trial each)")
    ap.add_argument("--world", type=int, default=0, help="GPUs (default: all)")
    ap.add_argument("--json", default="", help="write the results here")
    a = ap.parse_args()
    world = a.world or torch.cuda.device_count()
    if world < 2:
        print(f"check_experts: needs 2 or more GPUs, found {world}", file=sys.stderr)
        return 2
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.spawn(worker, args=(world, port, parse_ids(a.ids), [int(s) for s in a.seeds.split(",")], a.json),
                   nprocs=world, join=False)
    try:
        ctx.join()
    except mp.ProcessExitedException as e:
        print(f"check_experts: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
