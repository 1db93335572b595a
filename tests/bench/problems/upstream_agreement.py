"""Does ParallelKernelBench's reference agree with ours on the same inputs?

    python tests/bench/problems/upstream_agreement.py PKB_CHECKOUT --world 2 [--device cpu|cuda] [--small]
        [--problems 16,19,21,27,...] [--trials 2]

Starts one process per rank (gloo on CPU, NCCL on CUDA), builds each problem's inputs with our make_inputs
(through the worker's problem code, groups included), and calls our reference and PKB's
reference/<id>_<stem>.py on separate copies of them. Where our signature differs from PKB's, the arguments are
translated: 62's psi_indices, psi_values and psi_size become PKB's sparse COO psi; 48's two groups are dropped
(PKB builds them in the call); 29's shape list becomes a torch.Size, and the weight and bias tensors of 31, 32
and 49-51 nn.Linear modules. Under gloo, PKB's list-form dist.all_to_all (which torch 2.11's gloo refuses) is
carried by all_to_all_single, an all_gather_into_tensor into a stacked output (which gloo refuses) by the same
gather on flat views, and an all_gather of tensors of uneven lengths (which gloo refuses) by a padded one;
complex pieces travel as their reals. Prints per problem and rank whether the outputs (and in-place arguments)
are bitwise equal, else the largest difference and how many elements our problem's rule would reject. Exit 0
when every problem agrees within its rule.
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.distributed as dist

from declared import PROBLEMS_DIR, plan_of, problem_api, toml_of

DEFAULT_PROBLEMS = "10,16,19,21,26,27,28,29,30,31,32,49,50,51,55,62,65,66,67,69,70"


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def clone(x):
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, (list, tuple)):
        return type(x)(clone(v) for v in x)
    return x


def leaves(x, path="output"):
    if isinstance(x, (torch.Tensor, torch.Size)):
        return [(path, x.detach() if isinstance(x, torch.Tensor) else x)]
    if isinstance(x, (list, tuple)):
        return [leaf for i, v in enumerate(x) for leaf in leaves(v, f"{path}[{i}]")]
    if isinstance(x, dict):
        return [leaf for k, v in x.items() for leaf in leaves(v, f'{path}["{k}"]')]
    return [(path, x)]


def real_view(t):
    """A complex tensor as its reals (gloo carries real dtypes only)."""
    return torch.view_as_real(t) if t.is_complex() else t


def wide(t):
    return t.to(torch.complex128 if t.is_complex() else torch.float64)


def list_all_to_all(outputs, inputs, group=None, async_op=False):
    """dist.all_to_all over all_to_all_single: flat pieces, so shapes may differ per peer."""
    outputs, inputs = [real_view(t) for t in outputs], [real_view(t.contiguous()) for t in inputs]
    flat_in = torch.cat([t.reshape(-1) for t in inputs])
    flat_out = torch.empty(sum(t.numel() for t in outputs), dtype=flat_in.dtype, device=flat_in.device)
    dist.all_to_all_single(flat_out, flat_in, output_split_sizes=[t.numel() for t in outputs],
                           input_split_sizes=[t.numel() for t in inputs], group=group)
    for t, piece in zip(outputs, torch.split(flat_out, [t.numel() for t in outputs])):
        t.copy_(piece.view(t.shape))


def flat_all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """dist.all_gather_into_tensor on flat views: a stacked (W, *shape) output holds the same bytes as the
    concatenation gloo accepts."""
    return REAL_ALL_GATHER_INTO_TENSOR(output_tensor.view(-1), input_tensor.reshape(-1), group=group,
                                       async_op=async_op)


REAL_ALL_GATHER_INTO_TENSOR = dist.all_gather_into_tensor
REAL_ALL_GATHER = dist.all_gather


def uneven_all_gather(tensor_list, tensor, group=None, async_op=False):
    """dist.all_gather of tensors whose first dimension differs by rank (gloo refuses it): every rank pads its
    tensor to the longest, the padded ones are gathered and each is cut back to its list entry's length."""
    if all(t.shape == tensor.shape for t in tensor_list):
        return REAL_ALL_GATHER(tensor_list, tensor, group=group, async_op=async_op)
    longest = max(t.shape[0] for t in tensor_list)
    padded = tensor.new_zeros((longest,) + tuple(tensor.shape[1:]))
    padded[:tensor.shape[0]] = tensor
    gathered = [torch.empty_like(padded) for _ in tensor_list]
    REAL_ALL_GATHER(gathered, padded, group=group)
    for t, g in zip(tensor_list, gathered):
        t.copy_(g[:t.shape[0]])


def linear(weight, bias):
    """An nn.Linear holding the given weight (out, in) and bias (out,)."""
    layer = torch.nn.Linear(weight.shape[1], weight.shape[0], device=weight.device, dtype=weight.dtype)
    with torch.no_grad():
        layer.weight.copy_(weight)
        layer.bias.copy_(bias)
    return layer


def upstream_args(name, args):
    if name.startswith("62_"):
        x, idx, vals, size, *rest = args
        psi = torch.sparse_coo_tensor(idx, vals, size=tuple(size), device=x.device, check_invariants=True).coalesce()
        return (x, psi, *rest)
    if name.startswith("29_"):
        return (*args[:9], torch.Size(args[9]), *args[10:])
    if name.split("_")[0] in ("31", "32", "49", "50", "51"):
        x, gate_weight, gate_bias, gw, gb, uw, ub, dw, db, *rest = args
        return (x, gate_weight, gate_bias, linear(gw, gb), linear(uw, ub), linear(dw, db), *rest)
    if name.startswith("48_"):  # PKB builds the TP and FSDP groups itself, on every call
        return args[:6]
    return args


def rejected(path, ours, theirs, spec):
    """How many elements our rule for `path` rejects, with PKB's value as the candidate."""
    rule = next((o for o in spec["outputs"] if path == o["path"] or path.startswith(o["path"] + "[")), {})
    if path.startswith("input"):
        rule = next(a for a in spec["inputs"] if a.get("in_place"))
    mode = rule.get("mode", "allclose")
    a, b = wide(theirs), wide(ours)
    if mode == "norm":
        return int((a - b).norm() > rule["max_rel_norm"] * b.norm())
    if mode == "ulp":
        bits = 8 * ours.element_size()
        view = {8: torch.int8, 16: torch.int16, 32: torch.int32}[bits]
        ordered = lambda t: torch.where(t < 0, -(t & ((1 << (bits - 1)) - 1)), t)  # noqa: E731
        distance = (ordered(theirs.view(view).to(torch.int64)) - ordered(ours.view(view).to(torch.int64))).abs()
        return int((distance > rule["max_ulp"]).sum())
    if mode in ("exact", "rank") or not ours.is_floating_point():
        return int((a != b).sum())
    bad = int(((a - b).abs() > rule.get("atol", spec["atol"]) + rule.get("rtol", spec["rtol"]) * b.abs()).sum())
    return max(0, bad - int(rule.get("max_mismatch_fraction", 0) * b.numel()))  # beyond the allowed share


def rank_main(opts):
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = "cpu"
    if opts.device == "cuda":
        torch.cuda.set_device(rank)
        device = f"cuda:{rank}"
        dist.init_process_group("nccl", init_method=f"file://{opts.store}", rank=rank, world_size=world,
                                device_id=torch.device(device))
    else:
        dist.init_process_group("gloo", init_method=f"file://{opts.store}", rank=rank, world_size=world)
    real_all_to_all = dist.all_to_all
    report = []
    for name in opts.names:
        spec = toml_of(name)
        shape = spec["small_shape"] if opts.small else spec["shape"]
        problem = problem_api.Problem(plan_of(name, world, shape))
        inputs = problem_api.Inputs(problem, load(PROBLEMS_DIR / name / "inputs.py", f"inputs_{name}"), rank, world,
                                    device)
        ours_fn = load(PROBLEMS_DIR / name / "reference.py", f"ours_{name}").solution
        theirs_fn = load(Path(opts.pkb) / "reference" / f"{name}.py", f"pkb_{name}").solution
        for trial in range(opts.trials):
            args = inputs.build(problem_api.Draw(trial, problem_api.derived_seeds(42, rank, trial)))
            mine, pkb = clone(args), clone(upstream_args(name, args))
            ours = ours_fn(*mine)
            if opts.device == "cpu":
                dist.all_to_all = list_all_to_all
                dist.all_gather_into_tensor = flat_all_gather_into_tensor
                dist.all_gather = uneven_all_gather
            try:
                theirs = theirs_fn(*pkb)
            except Exception as e:  # noqa: BLE001 - e.g. a Triton kernel on a CPU tensor
                report.append({"problem": name, "rank": rank, "trial": trial, "path": "-",
                               "differs": f"PKB's reference raised {type(e).__name__}: {str(e)[:300]}"})
                break
            finally:
                dist.all_to_all = real_all_to_all
                dist.all_gather_into_tensor = REAL_ALL_GATHER_INTO_TENSOR
                dist.all_gather = REAL_ALL_GATHER
            compared = list(zip(leaves(ours), leaves(theirs)))
            for i in problem.in_place:
                compared += list(zip(leaves(mine[i], f"input[{i}]"), leaves(pkb[i], f"input[{i}]")))
            for (path, a), (_, b) in compared:
                entry = {"problem": name, "rank": rank, "trial": trial, "path": path}
                if not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor):  # torch.Size, None ...
                    entry["bitwise"] = a == b
                    if a != b:
                        entry["differs"] = f"{a} vs {b}"
                elif not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or a.shape != b.shape \
                        or a.dtype != b.dtype:
                    entry["differs"] = f"{type(a).__name__} {getattr(a, 'shape', '')} {getattr(a, 'dtype', '')} vs " \
                                       f"{type(b).__name__} {getattr(b, 'shape', '')} {getattr(b, 'dtype', '')}"
                else:
                    a, b = a.detach().cpu(), b.detach().cpu()  # PKB returns parameters that require grad
                    entry["bitwise"] = bool(torch.equal(a.view(torch.uint8) if a.element_size() == 1 else a,
                                                        b.view(torch.uint8) if b.element_size() == 1 else b))
                    diff = (wide(a) - wide(b)).abs()
                    entry["max_abs_diff"] = float(diff.max()) if diff.numel() else 0.0
                    entry["rejected_by_rule"] = rejected(path, a, b, spec)
                    entry["elements"] = a.numel()
                report.append(entry)
            dist.barrier()
    Path(opts.out, f"rank{rank}.json").write_text(json.dumps(report))
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pkb")
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--problems", default=DEFAULT_PROBLEMS)
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--rank-main", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    ids = opts.problems.split(",")
    opts.names = [next(p.name for p in PROBLEMS_DIR.iterdir() if p.name.split("_")[0] == i) for i in ids]
    if opts.rank_main:
        return rank_main(opts)
    out = Path(tempfile.mkdtemp(prefix="pkagent-upstream-"))
    env = dict(os.environ, WORLD_SIZE=str(opts.world), GLOO_SOCKET_IFNAME="lo", NCCL_NVLS_ENABLE="0")
    argv = [sys.executable, __file__, *sys.argv[1:], "--rank-main", "--store", str(out / "store"), "--out", str(out)]
    t0 = time.monotonic()
    procs = [subprocess.Popen(argv, env=dict(env, RANK=str(r))) for r in range(opts.world)]
    codes = [p.wait() for p in procs]
    if any(codes):
        print(f"ranks exited with {codes}")
        return 1
    entries = [e for r in range(opts.world) for e in json.loads((out / f"rank{r}.json").read_text())]
    ok = True
    for name in opts.names:
        mine = [e for e in entries if e["problem"] == name]
        bitwise = all(e.get("bitwise") for e in mine)
        bad = [e for e in mine if "differs" in e or e.get("rejected_by_rule")]
        ok = ok and not bad
        worst = max((e.get("max_abs_diff", 0.0) for e in mine), default=0.0)
        verdict = "bitwise equal" if bitwise else ("agrees within the rule" if not bad else "DISAGREES")
        print(f"{name}: {verdict} (W={opts.world}, {opts.device}, {opts.trials} trials, max abs diff {worst:.3g})")
        for e in bad:
            print(f"  rank {e['rank']} trial {e['trial']} {e['path']}: {e}")
    print(f"{time.monotonic() - t0:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
