"""One rank of the problems test: joins a gloo process group and runs every case's reference.

Usage: rank_main.py CASES_JSON OUT_DIR STORE_FILE, with RANK and WORLD_SIZE in the environment.
CASES_JSON is a list of {"dir", "dtype", "trial", "seed", "shape"}; for case i this rank writes
OUT_DIR/<i>_rank<r>.pt holding the reference's output, a fingerprint of the inputs it built, and whether
the reference left those inputs unchanged. One process group serves all cases, so torch is imported once
per rank, not once per problem.
"""

import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path

import torch
import torch.distributed as dist


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fingerprint(value) -> str:
    """A digest of a (nested) argument tuple: tensor bytes, shapes and dtypes, and plain values."""
    h = hashlib.sha256()

    def feed(v):
        if isinstance(v, torch.Tensor):
            t = v.detach().cpu().contiguous()
            h.update(f"T{tuple(t.shape)}{t.dtype}".encode())
            h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
        elif isinstance(v, (list, tuple)):
            h.update(f"L{len(v)}".encode())
            for item in v:
                feed(item)
        else:
            h.update(repr(v).encode())

    feed(value)
    return h.hexdigest()


def snapshot(value):
    """A deep copy of the tensors in an argument tuple, to detect in-place changes."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(snapshot(v) for v in value)
    return value


def main() -> int:
    cases_path, out_dir, store_file = sys.argv[1:4]
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", init_method=f"file://{store_file}", rank=rank, world_size=world)
    try:
        cases = json.loads(Path(cases_path).read_text())
        modules = {}
        for index, case in enumerate(cases):
            directory = Path(case["dir"])
            if directory not in modules:
                tag = directory.name
                modules[directory] = (load_module(directory / "inputs.py", f"inputs_{tag}"),
                                      load_module(directory / "reference.py", f"reference_{tag}"))
            inputs_mod, reference_mod = modules[directory]
            dtype = getattr(torch, case["dtype"])
            args = inputs_mod.make_inputs(rank, world, case["trial"], case["seed"], "cpu", dtype, **case["shape"])
            before = snapshot(args)
            output = reference_mod.solution(*args)
            torch.save({"output": output,
                        "inputs_fingerprint": fingerprint(before),
                        "inputs_unchanged": fingerprint(before) == fingerprint(args)},
                       Path(out_dir) / f"{index}_rank{rank}.pt")
            # Keep the ranks in step between cases so a failure points at one problem.
            dist.barrier()
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
