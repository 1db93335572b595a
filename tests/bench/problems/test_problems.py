"""The problem files of bench/problems: format, inputs, rooflines, and every reference against an independent
computation of the same maths.

Each reference runs in a real gloo process group at world sizes 2 and 4 (one group per world size serves all
problems: see rank_main.py); every rank's output is compared with a single-process computation written here
from all ranks' inputs, in float64, without any collective.
"""

import ast
import inspect
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import pytest
import torch

from rank_main import fingerprint, load_module

HERE = Path(__file__).resolve().parent
PROBLEMS_DIR = Path(os.environ.get("PKAGENT_PROBLEMS_DIR") or HERE.parents[2] / "bench" / "problems")

# The problems this suite must hold, by directory name.
PORTED = ["1_allreduce", "2_allgather", "3_broadcast", "4_reduce", "5_scatter", "6_gather", "7_reducescatter",
          "8_alltoall", "13_gemm_allreduce", "16_gemm_reducescatter", "18_tp_rms_norm", "27_moe_all2all_primitive"]
WORLDS = [2, 4]
SEED = 1234
SMALL_SHAPE = {"M": 16, "N": 24, "K": 40}  # a non-default shape: sizes must come from the keyword arguments
FLOAT32_TOO = {"13_gemm_allreduce", "16_gemm_reducescatter", "18_tp_rms_norm"}
RANK_TIMEOUT_S = 240

TOP_KEYS = {"id", "stem", "category", "title", "world_sizes", "dtype", "atol", "rtol", "shape", "roofline"}
ROOFLINE_KEYS = {"link_bytes", "hbm_bytes", "flops"}
CATEGORIES = {"primitive", "gemm_comm", "fused", "moe", "sequence_parallel", "optimizer", "domain"}
REFERENCE_IMPORTS = {"torch", "torch.distributed", "math", "typing"}


def problem_toml(name):
    with open(PROBLEMS_DIR / name / "problem.toml", "rb") as f:
        return tomllib.load(f)


def inputs_module(name):
    return load_module(PROBLEMS_DIR / name / "inputs.py", f"test_inputs_{name}")


def reference_module(name):
    return load_module(PROBLEMS_DIR / name / "reference.py", f"test_reference_{name}")


def make_inputs(name, rank, world, trial, seed, dtype, shape):
    return inputs_module(name).make_inputs(rank, world, trial, seed, "cpu", dtype, **shape)


# ---------------------------------------------------------------------------------------------------------
# What the inputs must look like (from the PKB digest's table): a tensor is given by its shape, anything else
# by its value.

def input_layout(name, rank, W, M, N, K=None):
    return {
        "1_allreduce": [(M, N)],
        "2_allgather": [(M, N)],
        "3_broadcast": [(M, N)],
        "4_reduce": [(M, N), 0],
        "5_scatter": [(W, M, N)] if rank == 0 else [(M, N)],
        "6_gather": [(M, N)],
        "7_reducescatter": [(W * M, N)],
        "8_alltoall": [(W, M, N)],
        "13_gemm_allreduce": [(M, K), (K, N)],
        "16_gemm_reducescatter": [(M, K), (K, N)],
        "18_tp_rms_norm": [(M, N), (N,), 1e-5],
        "27_moe_all2all_primitive": [(M, N), [M // W] * W, [M // W] * W, None],
    }[name]


def layout_of(args):
    return [tuple(a.shape) if isinstance(a, torch.Tensor) else a for a in args]


# The constant inputs of problems 1-8: the value of every element, as a function of rank and slice.
def constant_value(name, rank, index):
    if name == "5_scatter":
        return index + 1 if rank == 0 else 0
    if name == "8_alltoall":
        return 10 * rank + index
    return rank + 1


CONSTANT = {"1_allreduce", "2_allgather", "3_broadcast", "4_reduce", "5_scatter", "6_gather", "7_reducescatter",
            "8_alltoall"}


# ---------------------------------------------------------------------------------------------------------
# The independent computation: every rank's expected output from all ranks' inputs, in float64.

def f64(t):
    return t.to(torch.float64)


def total(tensors):
    return torch.stack([f64(t) for t in tensors]).sum(dim=0)


def expected_outputs(name, args, W):
    first = [a[0] for a in args]
    if name == "1_allreduce":
        return [total(first)] * W
    if name == "2_allgather":
        return [torch.stack([f64(t) for t in first])] * W
    if name == "3_broadcast":
        return [f64(first[0])] * W  # src defaults to 0
    if name == "4_reduce":
        dst = args[0][1]
        return [total(first) if r == dst else f64(first[r]) for r in range(W)]
    if name == "5_scatter":
        return [f64(first[0][r]) for r in range(W)]  # src defaults to 0
    if name == "6_gather":
        return [torch.stack([f64(t) for t in first]) if r == 0 else f64(first[r]) for r in range(W)]
    if name == "7_reducescatter":
        return list(total(first).chunk(W, dim=0))
    if name == "8_alltoall":
        return [torch.stack([f64(first[s][r]) for s in range(W)]) for r in range(W)]
    if name in ("13_gemm_allreduce", "16_gemm_reducescatter"):
        full = sum(f64(A) @ f64(B) for A, B in args)
        return [full] * W if name == "13_gemm_allreduce" else list(full.chunk(W, dim=0))
    if name == "18_tp_rms_norm":
        x = torch.cat([f64(a[0]) for a in args], dim=1)  # the full (M, W*N) activations
        w = torch.cat([f64(a[1]) for a in args])
        eps = args[0][2]
        y = x / torch.sqrt(x.pow(2).mean(dim=1, keepdim=True) + eps) * w
        return list(y.chunk(W, dim=1))
    if name == "27_moe_all2all_primitive":
        outs = []
        for r in range(W):
            pieces = []
            for s in range(W):
                sends = args[s][1]
                assert args[r][2][s] == sends[r], "output split sizes must mirror the senders' input split sizes"
                start = sum(sends[:r])
                pieces.append(f64(args[s][0][start:start + sends[r]]))
            outs.append(torch.cat(pieces))
        return outs
    raise AssertionError(f"no independent computation for {name}")


def bf16_gemm_bound(name, args, W):
    """Worst-case error of a bf16 sum of W bf16-rounded partial products: each of the W roundings of a partial
    and of a partial sum is at most 2^-9 of the magnitudes involved (doubled for slack)."""
    magnitude = sum((f64(A) @ f64(B)).abs() for A, B in args)
    bound = W * 2.0 ** -8 * magnitude
    return [bound] * W if name == "13_gemm_allreduce" else list(bound.chunk(W, dim=0))


# ---------------------------------------------------------------------------------------------------------
# Roofline formulas: + - * / on numbers and names only.

_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.Div: lambda a, b: a / b}


def evaluate_formula(text, names):
    def walk(node):
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise ValueError(f"unknown name {node.id!r} in {text!r}")
            return names[node.id]
        raise ValueError(f"unsupported syntax {ast.dump(node)} in {text!r}")

    return walk(ast.parse(text, mode="eval"))


def roofline(name, W, E, shape=None):
    spec = problem_toml(name)
    names = dict(spec["shape"] if shape is None else shape, W=W, E=E)
    return {key: evaluate_formula(spec["roofline"][key], names) for key in ROOFLINE_KEYS}


def tensor_bytes(value):
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (list, tuple)):
        return sum(tensor_bytes(v) for v in value)
    return 0


# ---------------------------------------------------------------------------------------------------------
# The distributed runs: one gloo group per world size, all cases of all problems in it.

def build_cases():
    cases = []
    for name in PORTED:
        shape = problem_toml(name)["shape"]
        small = {k: SMALL_SHAPE[k] for k in shape}
        cases.append({"name": name, "dtype": "bfloat16", "trial": 0, "shape": shape})
        cases.append({"name": name, "dtype": "bfloat16", "trial": 1, "shape": small})
        if name in FLOAT32_TOO:
            cases.append({"name": name, "dtype": "float32", "trial": 0, "shape": shape})
    for case in cases:
        case["dir"] = str(PROBLEMS_DIR / case["name"])
        case["seed"] = SEED
    return cases


CASES = build_cases()
_runs = {}


def run_world(W):
    """Runs every case at world size W (once per session) and returns {case index: [per-rank result]}."""
    if W in _runs:
        if isinstance(_runs[W], str):
            pytest.fail(_runs[W])
        return _runs[W]
    work = Path(tempfile.mkdtemp(prefix=f"pkagent-problems-w{W}-"))
    (work / "cases.json").write_text(json.dumps(CASES))
    env = dict(os.environ, WORLD_SIZE=str(W), GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
    procs = []
    for rank in range(W):
        log = open(work / f"rank{rank}.log", "w")
        procs.append((subprocess.Popen([sys.executable, str(HERE / "rank_main.py"), str(work / "cases.json"),
                                        str(work), str(work / "store")],
                                       env=dict(env, RANK=str(rank)), stdout=log, stderr=subprocess.STDOUT), log))
    # Wait for all ranks; one failing leaves the others blocked in a collective, so stop them all at once.
    deadline = time.monotonic() + RANK_TIMEOUT_S
    while any(p.poll() is None for p, _ in procs):
        if time.monotonic() > deadline or any(p.poll() not in (None, 0) for p, _ in procs):
            break
        time.sleep(0.1)
    for proc, log in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        log.close()
    failures = [r for r, (p, _) in enumerate(procs) if p.returncode != 0]
    if failures:
        tails = "\n".join(f"--- rank {r} (exit {procs[r][0].returncode}) ---\n"
                          f"{(work / f'rank{r}.log').read_text()[-3000:]}" for r in failures)
        _runs[W] = (f"ranks {failures} of world {W} failed or hung past {RANK_TIMEOUT_S} s "
                    f"(logs in {work}):\n{tails}")
        pytest.fail(_runs[W])
    _runs[W] = {i: [torch.load(work / f"{i}_rank{r}.pt", weights_only=True) for r in range(W)]
                for i in range(len(CASES))}
    shutil.rmtree(work)  # kept only when a rank failed, for its log
    return _runs[W]


# ---------------------------------------------------------------------------------------------------------
# Tests

def test_suite_holds_the_ported_problems():
    present = sorted(p.name for p in PROBLEMS_DIR.iterdir() if p.is_dir() and p.name != "__pycache__")
    missing = sorted(set(PORTED) - set(present))
    assert not missing, f"missing problem directories: {missing}"
    for name in present:
        files = {f.name for f in (PROBLEMS_DIR / name).iterdir() if f.name != "__pycache__"}
        assert files == {"reference.py", "inputs.py", "problem.toml"}, f"{name}: unexpected files {files}"


@pytest.mark.parametrize("name", PORTED)
def test_problem_toml(name):
    spec = problem_toml(name)
    assert set(spec) == TOP_KEYS, f"{name}: keys {sorted(set(spec) ^ TOP_KEYS)} differ from the documented ones"
    assert f"{spec['id']}_{spec['stem']}" == name
    assert spec["category"] in CATEGORIES
    assert isinstance(spec["title"], str) and spec["title"]
    assert spec["world_sizes"] and all(isinstance(w, int) and w >= 2 for w in spec["world_sizes"])
    assert set(WORLDS) <= set(spec["world_sizes"])
    assert isinstance(getattr(torch, spec["dtype"], None), torch.dtype)
    assert spec["atol"] == 1e-2 and spec["rtol"] == 1e-2  # PKB's tolerances
    assert spec["shape"] and all(isinstance(v, int) and v > 0 for v in spec["shape"].values())
    assert spec["shape"]["M"] == 1024 and spec["shape"]["N"] == 1024  # PKB's defaults
    assert set(spec["roofline"]) == ROOFLINE_KEYS


@pytest.mark.parametrize("name", PORTED)
def test_roofline_formulas_are_sane(name):
    spec = problem_toml(name)
    shape = spec["shape"]
    previous_link = 0.0
    for W in sorted(spec["world_sizes"]):
        bound = roofline(name, W, 2)
        for key, value in bound.items():
            assert math.isfinite(value) and value >= 0, f"{name}: {key} = {value} at W={W}"
        assert bound["link_bytes"] > 0, f"{name}: every problem must move data between ranks"
        assert bound["link_bytes"] >= previous_link, f"{name}: link bytes shrink as the world grows"
        previous_link = bound["link_bytes"]
        if "K" in shape:
            assert bound["flops"] == 2 * shape["M"] * shape["K"] * shape["N"], f"{name}: GEMM flops are 2*M*K*N"
        if spec["category"] == "primitive" and name not in ("1_allreduce", "4_reduce", "7_reducescatter"):
            assert bound["flops"] == 0, f"{name}: a pure data movement has no flops"
    with pytest.raises(ValueError):
        evaluate_formula("__import__('os')", {"W": 2})


@pytest.mark.parametrize("name", PORTED)
def test_reference_is_self_contained(name):
    tree = ast.parse((PROBLEMS_DIR / name / "reference.py").read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module)
    assert imported <= REFERENCE_IMPORTS, f"{name}: reference.py imports {sorted(imported - REFERENCE_IMPORTS)}"
    functions = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert functions == ["solution"], f"{name}: reference.py must define only solution(), has {functions}"
    assert ast.get_docstring(tree), f"{name}: reference.py needs a docstring saying what solution() computes"
    for param in inspect.signature(reference_module(name).solution).parameters.values():
        if param.name.endswith("group"):
            assert param.default is None, f"{name}: {param.name} must default to None (the default group)"


@pytest.mark.parametrize("name", PORTED)
def test_inputs_are_deterministic_and_follow_the_shape_table(name):
    spec = problem_toml(name)
    dtype = getattr(torch, spec["dtype"])
    for W in spec["world_sizes"]:
        for shape in (spec["shape"], {k: SMALL_SHAPE[k] for k in spec["shape"]}):
            for rank in range(W):
                rng_before = torch.random.get_rng_state()
                args = make_inputs(name, rank, W, 0, SEED, dtype, shape)
                assert torch.equal(rng_before, torch.random.get_rng_state()), f"{name}: used the global RNG"
                assert layout_of(args) == input_layout(name, rank, W, **shape), f"{name} rank {rank} of {W}"
                for a in args:
                    if isinstance(a, torch.Tensor):
                        assert a.dtype == dtype and a.device.type == "cpu" and a.is_contiguous()
                assert fingerprint(args) == fingerprint(make_inputs(name, rank, W, 0, SEED, dtype, shape))

    W, shape = 4, spec["shape"]
    by_rank = [make_inputs(name, r, W, 0, SEED, dtype, shape) for r in range(W)]
    if name in CONSTANT:
        # Constant, rank-dependent values; trial and seed change nothing.
        for rank, args in enumerate(by_rank):
            t = args[0]
            slices = t.unbind(0) if t.dim() == 3 else [t]
            for index, s in enumerate(slices):
                assert torch.all(s == constant_value(name, rank, index)), f"{name} rank {rank} slice {index}"
            assert fingerprint(args) == fingerprint(make_inputs(name, rank, W, 3, SEED + 1, dtype, shape))
    else:
        # Standard-normal values, different per rank, per trial and per seed.
        for args in by_rank:
            for t in (a for a in args if isinstance(a, torch.Tensor) and a.numel() >= 1024):
                x = t.to(torch.float64)
                slack = 5 / math.sqrt(x.numel())  # five standard errors of the sample mean
                assert abs(x.mean().item()) < slack and abs(x.std().item() - 1) < slack, f"{name}: not N(0, 1)"
        prints = {fingerprint(a) for a in by_rank}
        prints.add(fingerprint(make_inputs(name, 0, W, 1, SEED, dtype, shape)))
        prints.add(fingerprint(make_inputs(name, 0, W, 0, SEED + 1, dtype, shape)))
        assert len(prints) == W + 2, f"{name}: inputs repeat across ranks, trials or seeds"


@pytest.mark.parametrize("W", WORLDS)
@pytest.mark.parametrize("name", PORTED)
def test_reference_matches_independent_computation(name, W):
    spec = problem_toml(name)
    results = run_world(W)
    checked = 0
    for index, case in enumerate(CASES):
        if case["name"] != name:
            continue
        where = f"{name} W={W} {case['dtype']} trial {case['trial']} shape {case['shape']}"
        dtype = getattr(torch, case["dtype"])
        args = [make_inputs(name, r, W, case["trial"], case["seed"], dtype, case["shape"]) for r in range(W)]
        expected = expected_outputs(name, args, W)
        loose = name in ("13_gemm_allreduce", "16_gemm_reducescatter") and dtype == torch.bfloat16
        bounds = bf16_gemm_bound(name, args, W) if loose else None
        for rank, got in enumerate(results[index]):
            assert got["inputs_fingerprint"] == fingerprint(args[rank]), f"{where}: rank {rank} built other inputs"
            assert got["inputs_unchanged"], f"{where}: the reference modified rank {rank}'s inputs"
            out = got["output"]
            assert isinstance(out, torch.Tensor), f"{where}: rank {rank} returned {type(out)}"
            assert out.dtype == dtype, f"{where}: rank {rank} returned {out.dtype}"
            assert out.shape == expected[rank].shape, f"{where}: rank {rank} shape {tuple(out.shape)}"
            error = (f64(out) - expected[rank]).abs()
            if loose:
                worst = (error - bounds[rank]).max().item()
                assert worst <= 0, f"{where}: rank {rank} exceeds the bf16 rounding bound by {worst}"
            else:
                allowed = spec["atol"] + spec["rtol"] * expected[rank].abs()
                bad = int((error > allowed).sum())
                assert bad == 0, f"{where}: rank {rank}: {bad} elements off, max abs error {error.max().item()}"
        # The least HBM traffic of the busiest rank: read its inputs once, write its output once.
        if case["shape"] == spec["shape"]:
            moved = max(tensor_bytes(args[r]) + tensor_bytes(results[index][r]["output"]) for r in range(W))
            hbm = roofline(name, W, torch.tensor([], dtype=dtype).element_size())["hbm_bytes"]
            assert hbm == moved, f"{where}: roofline hbm_bytes {hbm} != inputs read + output written {moved}"
        checked += 1
    assert checked >= 2
