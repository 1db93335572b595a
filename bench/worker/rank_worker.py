"""One rank of an evaluation: imports the code, builds the inputs, calls `solution`, times it.

Started by pkagent (never by torchrun), one process per rank, with RANK, WORLD_SIZE, LOCAL_RANK,
MASTER_ADDR and MASTER_PORT set, and the path of a plan (JSON, written by pkagent) as argv[1].
One process runs every trial and the timing, so an evaluation costs one start of Python, torch and
NCCL per rank.

Modes: "reference" runs the problem's reference and records, per trial, its outputs and its inputs
as they were before the call (pkagent caches them outside the candidate's reach); "candidate" runs
the candidate, records its outputs and its inputs after the call, and optionally times it against
the reference. Nothing here decides correctness: pkagent's judge compares the files in C++.

Files, under <out_dir>/rank<r>/: `phase` (what the rank is doing now, for pkagent's per-phase
timeouts), `trial<k>.st` (tensor_file layout), and `result.json` (written last).
"""

import importlib.util
import json
import os
import sys
import time
import traceback

# Bound before any candidate code runs (see timing.py).
import tensor_file
import timing
import torch
import torch.distributed as dist

_write_tensors = tensor_file.write
_init_process_group = dist.init_process_group

EXIT_FAILED = 3  # the rank reports an error in result.json


class WorkerError(Exception):
    """An expected failure, reported as `kind` (import_error, no_solution, call_error ...)."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


class Rank:
    def __init__(self, plan):
        self.plan = plan
        self.rank = int(os.environ["RANK"])
        self.world = int(os.environ["WORLD_SIZE"])
        self.dir = os.path.join(plan["out_dir"], f"rank{self.rank}")
        os.makedirs(self.dir, exist_ok=True)
        self.result = {"rank": self.rank, "ok": False, "phases": [], "trials": []}
        self.phase_name = None
        self.phase_t0 = time.monotonic()

    def phase(self, name):
        """Publishes the current phase (atomically) and records how long the previous one took."""
        now = time.monotonic()
        if self.phase_name is not None:
            self.result["phases"].append([self.phase_name, round(now - self.phase_t0, 4)])
        self.phase_name, self.phase_t0 = name, now
        tmp = os.path.join(self.dir, "phase.tmp")
        with open(tmp, "w") as f:
            f.write(name)
        os.replace(tmp, os.path.join(self.dir, "phase"))

    def finish(self):
        if self.phase_name is not None:
            self.phase("done")
        tmp = os.path.join(self.dir, "result.json.tmp")
        with open(tmp, "w") as f:
            json.dump(self.result, f)
        os.replace(tmp, os.path.join(self.dir, "result.json"))


def load_module(name, path, kind):
    """Imports a file as module `name`; any failure is a WorkerError of `kind`."""
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {path}")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod
    except SyntaxError as e:
        raise WorkerError(kind, f"syntax error in {os.path.basename(path)} line {e.lineno}: {e.msg}\n"
                          + "".join(traceback.format_exception_only(type(e), e))) from e
    except BaseException as e:  # noqa: BLE001 - anything a module does at import time
        raise WorkerError(kind, f"importing {os.path.basename(path)} failed: "
                          f"{type(e).__name__}: {e}\n{traceback.format_exc()}") from e


def pkb_make_inputs(root, problem_id):
    """Upstream mode: ParallelKernelBench's own generator, utils/input_output_tensors.py of the
    checkout staged at `root`, behind our make_inputs interface. The root goes on sys.path (as PKB's
    worker puts its project root there), so PKB solutions that import utils.* run unchanged. PKB's
    generator seeds the global RNG from (problem id, rank, trial) itself: the base seed is unused."""
    sys.path.insert(0, os.path.abspath(root))
    try:
        create = importlib.import_module("utils.input_output_tensors").create_input_tensor
    except BaseException as e:  # noqa: BLE001 - anything the module does at import time
        raise WorkerError("generator_error", "importing ParallelKernelBench's input generator "
                          f"utils/input_output_tensors.py (create_input_tensor) failed: {type(e).__name__}: {e}\n"
                          f"{traceback.format_exc()}") from e

    def make_inputs(rank, world, trial, seed, device, dtype, M, N):
        del seed
        return create(rank, world, problem_id, (M, N), dtype, trial=trial, device=device)

    return make_inputs


def candidate_traceback(e):
    """The traceback from the candidate's frames on (the worker's own frame left out)."""
    tb = e.__traceback__.tb_next if e.__traceback__ is not None else None
    return "".join(traceback.format_exception(type(e), e, tb))


def solution_of(mod, path):
    fn = getattr(mod, "solution", None)
    if fn is None:
        raise WorkerError("no_solution", f"{os.path.basename(path)} defines no `solution` function: "
                          "the module must define `def solution(...)` with the reference's signature")
    if not callable(fn):
        raise WorkerError("no_solution", f"`solution` in {os.path.basename(path)} is a "
                          f"{type(fn).__name__}, not a function")
    return fn


def tensors_of(x):
    """Clones every tensor in a nest of tuples/lists/dicts (keeping the nesting)."""
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, (tuple, list)) and not isinstance(x, torch.Size):
        return type(x)(tensors_of(v) for v in x)
    if isinstance(x, dict):
        return {k: tensors_of(v) for k, v in x.items()}
    return x


def init_distributed(device, rank, world):
    if device == "cuda":
        local = int(os.environ.get("LOCAL_RANK", rank))
        torch.cuda.set_device(local)
        dev = torch.device("cuda", local)
        _init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
        return f"cuda:{local}"
    _init_process_group("gloo", rank=rank, world_size=world)
    return "cpu"


def run(r):
    plan = r.plan
    problem = plan["problem"]
    mode = plan["mode"]
    perf = plan.get("perf")

    # Import everything before the process group exists, as PKB does: a candidate's module-level
    # code sees no initialised torch.distributed.
    r.phase("import")
    if problem.get("pkb_root"):
        make_inputs = pkb_make_inputs(problem["pkb_root"], int(problem["id"]))
    else:
        make_inputs = getattr(load_module("pk_inputs", problem["inputs"], "harness_error"), "make_inputs")
    ref_fn = None
    if mode == "reference" or perf:
        ref_fn = solution_of(load_module("pk_reference", problem["reference"], "harness_error"),
                             problem["reference"])
    fn = ref_fn
    if mode == "candidate":
        path = plan["candidate"]
        fn = solution_of(load_module("solution_mod", path, "import_error"), path)

    r.phase("init")
    device = init_distributed(plan["device"], r.rank, r.world)
    dtype = getattr(torch, problem["dtype"])
    shape = problem.get("shape", {})
    seed = int(plan["seed"])

    def inputs(trial):
        try:
            return tuple(make_inputs(r.rank, r.world, trial, seed, device, dtype, **shape))
        except BaseException as e:  # noqa: BLE001
            raise WorkerError("harness_error", f"make_inputs failed: {type(e).__name__}: {e}\n"
                              f"{traceback.format_exc()}") from e

    for trial in plan["trials"]:
        r.phase(f"trial {trial}")
        args = inputs(trial)
        before = tensors_of(args) if mode == "reference" else None
        try:
            out = fn(*args)
            if device != "cpu":
                torch.cuda.synchronize()
            dist.barrier()
        except BaseException as e:  # noqa: BLE001
            raise WorkerError("call_error", f"solution(...) raised {type(e).__name__} in trial {trial}: "
                              f"{e}\n{candidate_traceback(e)}") from e
        path = os.path.join(r.dir, f"trial{trial}.st")
        saved_inputs = before if mode == "reference" else args
        try:
            _write_tensors(path, {"output": out, "inputs": saved_inputs})
        except BaseException as e:  # noqa: BLE001
            raise WorkerError("call_error", f"the value returned by solution(...) in trial {trial} "
                              f"cannot be recorded: {type(e).__name__}: {e}") from e
        entry = {"trial": trial, "file": os.path.basename(path)}
        if mode == "reference":
            entry["mutated"] = mutated_leaves(before, args)
        if perf:
            r.phase(f"timing {trial}")
            ref_args, cand_args = inputs(trial), inputs(trial)
            try:
                t = timing.measure([lambda: ref_fn(*ref_args), lambda: fn(*cand_args)], device,
                                   timing.Settings(perf))
            except BaseException as e:  # noqa: BLE001
                raise WorkerError("timing_error", f"while timing trial {trial}: {type(e).__name__}: {e}\n"
                                  f"{traceback.format_exc()}") from e
            entry["reference_ms"], entry["candidate_ms"] = t["calls"]
            entry["warmup_calls"] = t["warmup_calls"]
        r.result["trials"].append(entry)

    r.phase("shutdown")
    dist.barrier()
    r.result["ok"] = True


def _bits(t):
    t = t.detach().to("cpu").contiguous().reshape(-1)
    if t.is_complex():
        t = torch.view_as_real(t).reshape(-1)
    return t.view(torch.uint8)


def mutated_leaves(before, after):
    """Per tensor leaf of the inputs, in tensor_file's order: did the call change it (bitwise)?"""
    flags = []

    def walk(b, a):
        if isinstance(b, torch.Tensor):
            same = (isinstance(a, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype
                    and torch.equal(_bits(a), _bits(b)))
            flags.append(not same)
        elif isinstance(b, dict):
            for k, v in b.items():
                walk(v, a.get(k) if isinstance(a, dict) else None)
        elif isinstance(b, (tuple, list)) and not isinstance(b, torch.Size):
            for i, v in enumerate(b):
                walk(v, a[i] if isinstance(a, (tuple, list)) and i < len(a) else None)

    walk(before, after)
    return flags


def main():
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    if plan.get("torch_extensions_dir"):
        # JIT builds (torch load_inline, Triton) go where the judge scans them for multicast
        # after the run, and where they survive to the next evaluation of the same candidate.
        jit = os.path.abspath(os.path.join(plan["torch_extensions_dir"], f"rank{os.environ['RANK']}"))
        os.environ["TORCH_EXTENSIONS_DIR"] = jit
        os.environ["TRITON_CACHE_DIR"] = os.path.join(jit, "triton")
    # kr_torch (kernels_runtime's binding), offered by the judge on CUDA: its sources and prebuilt
    # extension, importable before the candidate is.
    for path in reversed(plan.get("python_path") or []):
        sys.path.insert(0, os.path.abspath(path))
    os.environ.update(plan.get("env") or {})
    r = Rank(plan)
    code = 0
    try:
        run(r)
    except WorkerError as e:
        r.result["error"] = {"kind": e.kind, "phase": r.phase_name, "message": str(e)}
        code = EXIT_FAILED
    except BaseException as e:  # noqa: BLE001 - the worker's own bugs still get reported
        r.result["error"] = {"kind": "harness_error", "phase": r.phase_name,
                             "message": f"{type(e).__name__}: {e}\n{traceback.format_exc()}"}
        code = EXIT_FAILED
    r.finish()
    sys.stdout.flush()
    sys.stderr.flush()
    if code == 0 and dist.is_initialized():
        dist.destroy_process_group()
    # After a failure other ranks may sit in a collective: leave without tearing NCCL down.
    os._exit(code)


if __name__ == "__main__":
    main()
