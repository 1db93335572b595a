"""One rank of the problems test: joins a gloo process group and runs every case's reference through the
worker's own problem code (bench/worker/problem_api.py: declared groups, input context, argument checks,
records).

Usage: rank_main.py CASES_JSON OUT_DIR STORE_FILE, with RANK and WORLD_SIZE in the environment.
CASES_JSON is a list of {"name", "plan", "trial", "seed"}; for case i this rank writes OUT_DIR/<i>_rank<r>.pt
holding the reference's output, a fingerprint of the inputs it built, the per-leaf flags of what the call
changed, the in-place arguments after the call and the judge data. One process group serves all cases, so
torch is imported once per rank; each problem's groups are built once, as the worker does.
"""

import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path

import torch
import torch.distributed as dist

from declared import PROBLEMS_DIR, problem_api


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fingerprint(value) -> str:
    """A digest of a (nested) argument tuple: tensor bytes, shapes and dtypes, plain values, groups by ranks."""
    h = hashlib.sha256()

    def feed(v):
        if isinstance(v, torch.Tensor):
            t = v.detach().cpu().contiguous()
            h.update(f"T{tuple(t.shape)}{t.dtype}".encode())
            # Flattened first: a 0-d tensor cannot be viewed as bytes.
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
        elif isinstance(v, (list, tuple)):
            h.update(f"L{len(v)}".encode())
            for item in v:
                feed(item)
        elif isinstance(v, problem_api.StandInGroup) or isinstance(v, dist.ProcessGroup):
            ranks = v.ranks if isinstance(v, problem_api.StandInGroup) else dist.get_process_group_ranks(v)
            h.update(f"G{list(ranks)}".encode())
        else:
            h.update(repr(v).encode())

    feed(value)
    return h.hexdigest()


def main() -> int:
    cases_path, out_dir, store_file = sys.argv[1:4]
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", init_method=f"file://{store_file}", rank=rank, world_size=world)
    try:
        cases = json.loads(Path(cases_path).read_text())
        modules, groups = {}, {}
        for index, case in enumerate(cases):
            name = case["name"]
            if name not in modules:
                modules[name] = (load_module(PROBLEMS_DIR / name / "inputs.py", f"inputs_{name}"),
                                 load_module(PROBLEMS_DIR / name / "reference.py", f"reference_{name}"))
            inputs_mod, reference_mod = modules[name]
            problem = problem_api.Problem(case["plan"])
            mesh_key = json.dumps(case["plan"]["mesh"])
            if mesh_key not in groups:
                groups[mesh_key] = problem_api.build_groups(problem, rank, world)
            inputs = problem_api.Inputs(problem, inputs_mod, rank, world, "cpu", groups[mesh_key])
            draw = problem_api.Draw(case["trial"], problem_api.derived_seeds(case["seed"], rank, case["trial"]))
            args = inputs.build(draw)
            before = problem_api.snapshot(problem, args)
            inputs_print = fingerprint(args)
            output = reference_mod.solution(*args)
            trees, mutated = problem_api.reference_record(problem, inputs, draw, args, output, before)
            torch.save({"output": output, "inputs_fingerprint": inputs_print, "mutated": mutated,
                        "in_place": trees.get("in_place"), "judge": trees.get("judge")},
                       Path(out_dir) / f"{index}_rank{rank}.pt")
            # Keep the ranks in step between cases so a failure points at one problem.
            dist.barrier()
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
