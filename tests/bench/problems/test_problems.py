"""The problem files of bench/problems against what each declares (docs/problem_format.md): problem.toml's
keys, the arguments make_inputs builds (names, types, dtypes, value distributions, groups, determinism),
the rooflines, and every reference against an independent computation of the same maths.

Each reference runs in a real gloo process group through the worker's own problem code (declared groups,
input context, records): at world size 2 at the default and the small shape, at world size 4 at the small
shape (one process group per world size serves all problems: see rank_main.py). Every rank's output is
compared with a single-process computation from all ranks' inputs (independent.py), by the rule the problem
declares for it.
"""

import inspect
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import torch

from declared import PROBLEMS_DIR, evaluate_formula, mesh_sizes, plan_of, problem_api, problem_of, toml_of
from independent import bf16_gemm_bound, expected, f64
from independent_sequence_attention import local_attention_alone, ulysses_attention, ulysses_head_mixing_alone
from rank_main import fingerprint, load_module

HERE = Path(__file__).resolve().parent

# The problems this suite must hold, by directory name.
PORTED = ["1_allreduce", "2_allgather", "3_broadcast", "4_reduce", "5_scatter", "6_gather", "7_reducescatter",
          "8_alltoall", "9_layernorm_backward", "10_embedding_lookup", "11_allgather_gemm_AT", "12_allgather_gemm",
          "13_gemm_allreduce", "14_gemm_allgather", "15_combined_sharded_gemms", "16_gemm_reducescatter",
          "17_rope_allgather", "18_tp_rms_norm", "19_blocked_fp8_quantize", "20_blocked_fp8_dequantize",
          "21_clip_grad_norm_no_ep", "22_clip_grad_norm_ep", "23_grad_acc_loss", "24_load_balancing_loss_fn",
          "25_importance_sampling_loss", "26_moe_token_preprocess", "27_moe_all2all_primitive", "28_moe_pre_all2all",
          "29_moe_post_all2all", "30_moe_epgroupgemm_lora_backward", "31_fused_moe_fwd", "32_fused_moe_fwd_lora",
          "33_ulysses_all_to_all_tensor_primitive", "34_ulysses_all_gather_into_tensor_primitive",
          "35_ulysses_all_gather_variable_primitive", "36_ulysses_gather_seq_scatter_heads",
          "37_ulysses_gather_heads_scatter_seq", "38_ulysses_gather_seq_scatter_heads_qkv",
          "39_ulysses_attention_e2e", "40_ddp", "41_zero1_optimizer_shard", "42_zero2_optimizer_shard_grad",
          "43_fused_adam_grad_unshard_allgather", "44_quantized_grad_allreduce", "45_reducescatter_fused_rmsnorm",
          "46_gemv_decode", "47_fsdp_step_e2e", "48_fsdp_and_tp", "49_moe_ep_balanced", "50_moe_ep_wide",
          "51_moe_ep_narrow", "52_fp8_reduce_scatter_grads", "53_fp8_allgather_params", "54_ring_attention",
          "55_ring_attention_tp", "56_ring_attention_pp", "57_ring_attention_backward_dp",
          "58_openclip_contrastive_loss", "59_physicsnemo_distributed_rfft", "60_physicsnemo_distributed_irfft",
          "61_gsplat_3d_gaussian_splatting", "62_torchharmonics_spherical_convolution",
          "63_deepmd_kalman_filter_optimizer", "64_gnn_neighbor_sampling", "65_gnn_feature_exchange_all2all",
          "66_gnn_feature_exchange_all2all_backward", "67_gnn_sparse_embedding_all2all",
          "68_gnn_sparse_feature_fetch_projection", "69_gnn_negative_scoring", "70_torchrec_kjt_all2all",
          "71_hyena_conv1d_boundary_exchange", "72_hyena_forward_cp", "73_vocab_parallel_cross_entropy_loss",
          "74_fla_kimi_delta_attention_cp_tp", "75_fla_gated_deltanet_cp", "76_opensora_conv3d_allreduce",
          "77_magi1_cso_async_attention", "78_magi1_tile_parallel_vae_decode", "79_dinov2_distributed_knn",
          "80_dinov2_distributed_sinkhorn_knopp", "81_sam3_allgather_iou_suppression",
          "82_vocab_parallel_log_prob_topk", "83_vocab_parallel_log_prob_topk_chunked",
          "84_vocab_parallel_log_prob_topk_chunked_backward", "85_distributed_sample_sort",
          "86_tp_muon_orthogonalization", "87_conv2d_boundary_exchange"]
SEED = 1234
FLOAT32_TOO = {"13_gemm_allreduce", "16_gemm_reducescatter", "18_tp_rms_norm"}
# Their default shapes cost minutes of CPU; the small shape runs the same code. 40-42: a bf16 MLP forward and
# backward and a float64 autograd check of it; 62: a 256-step loop over 16 MiB, and the dense float64 check of
# it; 63: eight (1024, 1024) float64 covariances, recorded twice per rank; 68: a 4 GB table shard per rank;
# 76 and 87: half a TFLOP of convolution per rank; 77: 3.6 TFLOP of attention per rank; 80: 16 M counter-based
# scores per rank, drawn four times (see DRAW_SMALL_ONLY); 60: every rank draws and transforms the shared
# 20.7 M-value field.
SMALL_ONLY = {"40_ddp", "41_zero1_optimizer_shard", "42_zero2_optimizer_shard_grad",
              "60_physicsnemo_distributed_irfft", "62_torchharmonics_spherical_convolution",
              "63_deepmd_kalman_filter_optimizer", "68_gnn_sparse_feature_fetch_projection",
              "76_opensora_conv3d_allreduce", "77_magi1_cso_async_attention", "80_dinov2_distributed_sinkhorn_knopp",
              "87_conv2d_boundary_exchange"}
# Their default shape repeats 31's (the same MoE layer with other expert counts, or LoRA on top) at ~10 s each
# of float64 expert MLPs: 31 checks the default shape for all of them.
SMALL_ONLY |= {"32_fused_moe_fwd_lora", "49_moe_ep_balanced", "50_moe_ep_wide", "51_moe_ep_narrow"}
# 25's default shape is a (1024 x 1024) @ (1024 x 32000) bf16 head per rank: ~17 s per call on two CPU cores;
# 47's is 40-42's MLP step.
SMALL_ONLY |= {"25_importance_sampling_loss", "47_fsdp_step_e2e"}
# Drawing their default-shape inputs takes about a minute of CPU (tens of millions of counter-based values; 68:
# two billion): their distributions are checked at the small shape only.
DRAW_SMALL_ONLY = {"60_physicsnemo_distributed_irfft", "68_gnn_sparse_feature_fetch_projection",
                   "76_opensora_conv3d_allreduce", "77_magi1_cso_async_attention", "80_dinov2_distributed_sinkhorn_knopp",
                   "87_conv2d_boundary_exchange"}
# 25: its default weight (32000 x 1024) takes ~20 s to draw on the CPU.
DRAW_SMALL_ONLY |= {"25_importance_sampling_loss"}
# Trials whose inputs take another form, run at the small shape besides the usual ones: 85's odd ranks hold
# no values when trial % 4 == 3.
EXTRA_TRIALS = {"85_distributed_sample_sort": [3]}
RANK_TIMEOUT_S = 300

TOP_KEYS = {"id", "stem", "category", "title", "world_sizes", "dtype", "atol", "rtol", "shape", "small_shape",
            "inputs", "outputs", "second_distribution", "roofline"}
OPTIONAL_KEYS = {"mesh", "degenerate"}
CATEGORIES = {"primitive", "gemm_comm", "fused", "moe", "sequence_parallel", "optimizer", "domain"}


def inputs_module(name):
    return load_module(PROBLEMS_DIR / name / "inputs.py", f"test_inputs_{name}")


def reference_module(name):
    return load_module(PROBLEMS_DIR / name / "reference.py", f"test_reference_{name}")


def no_dist_inputs(name, W, rank, trial=0, seed=SEED, shape=None, dtype=None, timed=False):
    """make_inputs of one rank without any process group (stand-in groups), through the worker's checks, with
    the seeds derived from `seed` as rank_main.py derives them (timed: a timed call's, from torch's
    generators)."""
    problem = problem_of(name, W, shape, dtype)
    inputs = problem_api.Inputs(problem, inputs_module(name), rank, W, "cpu",
                                problem_api.stand_in_groups(problem, rank, W),
                                lambda r, t: problem_api.derived_seeds(seed, r, t))
    return inputs, inputs.build(problem_api.Draw(trial, problem_api.derived_seeds(seed, rank, trial), timed))


def small(name):
    return toml_of(name)["small_shape"]


def degenerate(spec, W):
    """As the loader has it: one rank communicates nothing, so W = 1 is degenerate without being listed."""
    return W == 1 or W in spec.get("degenerate", {}).get("worlds", [])


def multi_rank_worlds(spec):
    """The declared worlds of more than one rank, where the CPU checks of make_inputs run: they are about what
    differs between ranks; W = 1 is checked on GPU hosts, where every reference runs as its own candidate."""
    return [W for W in spec["world_sizes"] if W > 1]


# ---------------------------------------------------------------------------------------------------------
# The distributed runs: one gloo group per world size, all cases of all problems in it.

def build_cases(W):
    cases = []
    for name in PORTED:
        if W not in toml_of(name)["world_sizes"]:
            continue
        shapes = [(small(name), 1)] + ([(toml_of(name)["shape"], 0)] if W == 2 and name not in SMALL_ONLY else [])
        for shape, trial in shapes:
            cases.append({"name": name, "plan": plan_of(name, W, shape), "trial": trial, "seed": SEED})
        for trial in EXTRA_TRIALS.get(name, []):
            cases.append({"name": name, "plan": plan_of(name, W, small(name)), "trial": trial, "seed": SEED})
        if name in FLOAT32_TOO:
            cases.append({"name": name, "plan": plan_of(name, W, small(name), "float32"), "trial": 2, "seed": SEED})
    return cases


_runs = {}


def run_world(W):
    """Runs every case at world size W (once per session) and returns (cases, {index: [per-rank result]})."""
    if W in _runs:
        if isinstance(_runs[W], str):
            pytest.fail(_runs[W])
        return _runs[W]
    cases = build_cases(W)
    work = Path(tempfile.mkdtemp(prefix=f"pkagent-problems-w{W}-"))
    (work / "cases.json").write_text(json.dumps(cases))
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
    results = {i: [torch.load(work / f"{i}_rank{r}.pt", weights_only=False) for r in range(W)]
               for i in range(len(cases))}
    _runs[W] = (cases, results)
    shutil.rmtree(work)  # kept only when a rank failed, for its log
    return _runs[W]


# ---------------------------------------------------------------------------------------------------------
# problem.toml

def test_suite_holds_the_ported_problems():
    present = sorted(p.name for p in PROBLEMS_DIR.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert sorted(PORTED) == present, f"bench/problems holds {present}"
    for name in present:
        files = {f.name for f in (PROBLEMS_DIR / name).iterdir() if f.name != "__pycache__"}
        assert files == {"reference.py", "inputs.py", "problem.toml"}, f"{name}: unexpected files {files}"


@pytest.mark.parametrize("name", PORTED)
def test_problem_toml(name):
    spec = toml_of(name)
    assert TOP_KEYS <= set(spec) <= TOP_KEYS | OPTIONAL_KEYS, f"{name}: keys {sorted(spec)}"
    assert f"{spec['id']}_{spec['stem']}" == name
    assert spec["category"] in CATEGORIES
    assert isinstance(spec["title"], str) and spec["title"]
    assert 2 in spec["world_sizes"], f"{name}: the CPU checks run every problem at W = 2"
    assert isinstance(getattr(torch, spec["dtype"], None), torch.dtype)
    assert spec["shape"].keys() == spec["small_shape"].keys(), f"{name}: every shape key needs a small setting"
    for key, value in spec["small_shape"].items():
        assert 0 < value <= spec["shape"][key], f"{name}: small_shape.{key} = {value} is not small"
    for W in spec["world_sizes"]:
        sizes = mesh_sizes(spec, W)
        if sizes:
            assert math.prod(sizes) == W, f"{name}: mesh sizes {sizes} at W={W}"
            if 1 in sizes:
                assert degenerate(spec, W), f"{name}: W={W} has a mesh axis of 1"


# What make_inputs calls for each kind of draw [second_distribution] may change.
DRAW_CALLS = {"normal": r"\.randn\(", "uniform": r"\.rand\(", "integers": r"\.randint\("}


@pytest.mark.parametrize("name", PORTED)
def test_the_second_distribution_changes_draws_the_inputs_make(name):
    """A change declared for a kind of draw make_inputs never makes would change nothing: trial 1 would
    draw the usual values while the file says otherwise."""
    second = toml_of(name)["second_distribution"]
    source = (PROBLEMS_DIR / name / "inputs.py").read_text()
    changed = [kind for kind in DRAW_CALLS if second.get(kind, "same") != "same"]
    assert changed or second.get("why"), f"{name}: nothing changes and no why"
    for kind in changed:
        assert re.search(DRAW_CALLS[kind], source), f"{name}: {kind} draws change, but inputs.py makes none"


@pytest.mark.parametrize("name", PORTED)
def test_declared_arguments_match_the_signature(name):
    spec = toml_of(name)
    params = list(inspect.signature(reference_module(name).solution).parameters.values())
    declared = [a["name"] for a in spec["inputs"]]
    assert [p.name for p in params[:len(declared)]] == declared, f"{name}: solution{[p.name for p in params]}"
    assert all(p.default is not inspect.Parameter.empty for p in params[len(declared):]), \
        f"{name}: undeclared parameters need defaults"
    for p in params:
        if p.name.endswith("group"):
            assert p.default is None, f"{name}: {p.name} must default to None (the default group)"
    module = inputs_module(name)
    for rule in spec["outputs"] + [a for a in spec["inputs"] if a.get("in_place")]:
        if "keys" in rule:
            assert callable(getattr(module, rule["keys"], None)), f"{name}: inputs.py lacks {rule['keys']}()"
    assert (inspect.getdoc(reference_module(name)) or "").strip(), f"{name}: reference.py needs a docstring"


@pytest.mark.parametrize("name", PORTED)
def test_roofline_formulas_are_sane(name):
    spec = toml_of(name)
    assert set(spec["roofline"]) == {"link_bytes", "hbm_bytes", "flops"}
    E = torch.tensor([], dtype=getattr(torch, spec["dtype"])).element_size()
    for shape in (spec["shape"], spec["small_shape"]):
        for W in spec["world_sizes"]:
            bound = {k: evaluate_formula(v, dict(shape, W=W, E=E)) for k, v in spec["roofline"].items()}
            for key, value in bound.items():
                assert math.isfinite(value) and value >= 0, f"{name}: {key} = {value} at W={W}"
            if not degenerate(spec, W):  # a degenerate W may move nothing
                assert bound["link_bytes"] > 0, f"{name}: every problem moves data between ranks (W={W})"
    with pytest.raises(ValueError):
        evaluate_formula("__import__('os')", {"W": 2})


# ---------------------------------------------------------------------------------------------------------
# make_inputs against the declarations

def _check_values(where, t, decl):
    values = decl["values"]
    x = (torch.view_as_real(t) if t.is_complex() else t).to(torch.float64).reshape(-1)
    assert torch.isfinite(x).all(), f"{where}: not finite"
    if values == "normal" and x.numel() >= 256:
        mean, std = decl.get("mean", 0.0), decl.get("std", 1.0)
        slack = 5 / math.sqrt(x.numel())  # five standard errors
        assert abs(x.mean().item() - mean) < slack * std + 1e-12, f"{where}: mean {x.mean().item()}, declared {mean}"
        assert abs(x.std().item() / std - 1) < slack * 2, f"{where}: std {x.std().item()}, declared {std}"
    elif values == "uniform":
        # Rounding to a narrow dtype (bf16) may carry a value just below high onto high rounded to that dtype.
        high = max(decl["high"], torch.tensor(decl["high"], dtype=torch.float64).to(t.dtype).item())
        assert x.min().item() >= decl["low"] and x.max().item() <= high, f"{where}: outside [low, high]"
    elif values == "integers":
        assert x.min().item() >= decl["low"] and x.max().item() < decl["high"], f"{where}: outside [low, high)"
        assert torch.equal(x, x.round()), f"{where}: declared integers"
        if x.numel() >= 256:
            if x.numel() >= 20 * int(decl["high"] - decl["low"]):  # enough draws to see every value
                assert x.unique().numel() == int(decl["high"] - decl["low"]), f"{where}: not every integer drawn"


def _check_args(name, args, inputs, W):
    spec = toml_of(name)
    ctx = inputs.context(problem_api.Draw(0, problem_api.derived_seeds(SEED, inputs.rank, 0)))
    for i, (value, decl) in enumerate(zip(args, spec["inputs"])):
        where = f"{name} argument {decl['name']} (W={W}, rank {inputs.rank})"
        tensors = [value] if decl["type"] == "tensor" else value if decl["type"] == "tensors" else []
        for t in tensors:
            assert t.is_contiguous(), f"{where}: not contiguous"
            if t.numel():
                _check_values(where, t, decl)
        if "value" in decl:
            assert value == decl["value"], f"{where}: {value!r}, declared {decl['value']!r}"
        if decl["type"] == "group":
            assert value is ctx.groups[decl["group"]]


@pytest.mark.parametrize("name", PORTED)
def test_inputs_follow_the_declarations(name):
    spec = toml_of(name)
    for W in multi_rank_worlds(spec):
        prints = set()
        for rank in range(W):
            rng_before = torch.random.get_rng_state()
            inputs, args = no_dist_inputs(name, W, rank, shape=small(name))
            assert torch.equal(rng_before, torch.random.get_rng_state()), f"{name}: used the global RNG"
            _check_args(name, args, inputs, W)
            again = no_dist_inputs(name, W, rank, shape=small(name))[1]
            assert fingerprint(args) == fingerprint(again), f"{name}: make_inputs is not deterministic"
            prints.add(fingerprint(args))
        assert len(prints) == W, f"{name}: two ranks of W={W} get the same arguments"
    # New values for another trial and seed; the distributions at the default shape (large samples).
    args = no_dist_inputs(name, 2, 0, shape=small(name))[1]
    others = {fingerprint(no_dist_inputs(name, 2, 0, trial=1, shape=small(name))[1]),
              fingerprint(no_dist_inputs(name, 2, 0, seed=SEED + 1, shape=small(name))[1])}
    assert fingerprint(args) not in others and len(others) == 2, f"{name}: inputs repeat across trials or seeds"
    if name not in DRAW_SMALL_ONLY:
        inputs, args = no_dist_inputs(name, 2, 1)
        _check_args(name, args, inputs, 2)


@pytest.mark.parametrize("name", PORTED)
def test_timed_inputs_follow_the_declarations(name):
    """A timed call's inputs come from torch's generators (generator_fill): every problem's make_inputs
    works with them, within its declarations, the same for the same seed, its own on every rank."""
    W = multi_rank_worlds(toml_of(name))[0]
    prints = set()
    for rank in range(W):
        rng_before = torch.random.get_rng_state()
        inputs, args = no_dist_inputs(name, W, rank, shape=small(name), timed=True)
        assert torch.equal(rng_before, torch.random.get_rng_state()), f"{name}: used the global RNG"
        _check_args(name, args, inputs, W)
        again = no_dist_inputs(name, W, rank, shape=small(name), timed=True)[1]
        assert fingerprint(args) == fingerprint(again), f"{name}: timed inputs are not deterministic"
        prints.add(fingerprint(args))
    assert len(prints) == W, f"{name}: two ranks of W={W} get the same timed arguments"


def test_the_worker_refuses_what_it_cannot_record():
    problem = problem_of("18_tp_rms_norm", 2, small("18_tp_rms_norm"))
    ctx = problem_api.InputContext(problem, 0, 2, 0, problem_api.derived_seeds(SEED, 0, 0), "cpu",
                                   problem_api.stand_in_groups(problem, 0, 2))
    good = (ctx.randn((16, 24), "h"), ctx.randn((24,), "w"), 1e-5)
    problem_api.check_args(problem, good, ctx)
    cases = {
        "argument 'local_weight' (input[1]) is a Linear": (good[0], torch.nn.Linear(2, 2), 1e-5),
        "argument 'local_hidden_states' (input[0]) is a tensor of layout torch.sparse_coo":
            (good[0].to_sparse(), good[1], 1e-5),
        "argument 'local_weight' (input[1]) has dtype torch.float32, declared torch.bfloat16":
            (good[0], good[1].float(), 1e-5),
        "make_inputs returned 2 arguments, problem.toml declares 3": good[:2],
    }
    for message, args in cases.items():
        with pytest.raises(problem_api.InputError, match=re.escape(message)):
            problem_api.check_args(problem, args, ctx)
    # A list of shapes must hold tuples of sizes.
    shapes_problem = problem_of("47_fsdp_step_e2e", 2, small("47_fsdp_step_e2e"))
    args = list(no_dist_inputs("47_fsdp_step_e2e", 2, 0, shape=small("47_fsdp_step_e2e"))[1])
    for bad in ([(2, "3")], [4, 5], [(2, -1)]):
        args[3] = bad
        with pytest.raises(problem_api.InputError, match=re.escape("argument 'param_shapes' (input[3]) is")):
            problem_api.check_args(shapes_problem, tuple(args), ctx)
    # Without declarations (upstream mode) the recorder still names what it cannot hold.
    bare = problem_api.Problem({"id": 1, "dtype": "bfloat16"})
    with pytest.raises(problem_api.InputError, match=r"input\[1\]: a torch.nn.modules.linear.Linear"):
        problem_api.check_args(bare, (good[0], torch.nn.Linear(2, 2)), ctx)


# ---------------------------------------------------------------------------------------------------------
# The references, run distributed, against the independent computation

def _leaves(x, path="output"):
    if isinstance(x, (torch.Tensor, torch.Size)):
        return [(path, x)]
    if isinstance(x, (tuple, list)):
        return [leaf for i, v in enumerate(x) for leaf in _leaves(v, f"{path}[{i}]")]
    if isinstance(x, dict):
        return [leaf for k, v in x.items() for leaf in _leaves(v, f'{path}["{k}"]')]
    return [(path, x)]


def _rule_for(spec, path):
    rules = [(o["path"], o) for o in spec["outputs"]]
    rules += [(f"input[{i}]", a) for i, a in enumerate(spec["inputs"]) if a.get("in_place")]
    covering = [(p, r) for p, r in rules if path == p or path.startswith(p + "[")]
    return max(covering, key=lambda pr: len(pr[0]))[1] if covering else {}


def _assert_close(where, got, want, rule, spec, loose_bound=None):
    """got (the reference's value) against want (float64, independent) by the declared rule."""
    mode = rule.get("mode", "allclose")
    if mode == "rank":
        lo, hi = want.lo, want.hi
        assert got.dtype == torch.int64 and got.shape == lo.shape, f"{where}: {got.dtype} {tuple(got.shape)}"
        bad = int(((got < lo) | (got > hi)).sum())
        assert bad == 0, f"{where}: {bad} ranks outside their tie groups"
        return
    if mode == "index":
        keys = want.keys
        assert got.dtype == torch.int64 and got.shape == want.want.shape, f"{where}: {got.dtype} {tuple(got.shape)}"
        assert ((got >= 0) & (got < keys.shape[-1])).all(), f"{where}: indices out of range"
        assert all(len(set(row)) == len(row) for row in got.reshape(-1, got.shape[-1]).tolist()), \
            f"{where}: an index repeats in its row"
        bad = int((keys.gather(-1, got) != want.want).sum())
        assert bad == 0, f"{where}: {bad} indices select other keys than the expected order"
        return
    assert got.shape == want.shape, f"{where}: shape {tuple(got.shape)}, expected {tuple(want.shape)}"
    if mode == "ulp":
        codes = lambda t: t.view(torch.int8 if t.element_size() == 1 else torch.int32).to(torch.int64)  # noqa: E731
        a, b = codes(got), codes(want.to(got.dtype))
        ordered = lambda c, bits: torch.where(c < 0, -(c & ((1 << (bits - 1)) - 1)), c)  # noqa: E731
        bits = 8 * got.element_size()
        worst = (ordered(a, bits) - ordered(b, bits)).abs().max().item() if a.numel() else 0
        assert worst <= rule["max_ulp"], f"{where}: {worst} ulp apart, declared {rule['max_ulp']}"
        return
    error = (f64(got) - want).abs()
    if mode == "norm":
        rel = (error.norm() / want.norm()).item()
        assert rel <= rule["max_rel_norm"], f"{where}: relative norm error {rel}"
        return
    if loose_bound is not None:
        worst = (error - loose_bound).max().item()
        assert worst <= 0, f"{where}: exceeds the bf16 rounding bound by {worst}"
        return
    allowed = 0.0 if mode == "exact" else rule.get("atol", spec["atol"]) + rule.get("rtol", spec["rtol"]) * want.abs()
    bad = int((error > allowed).sum())
    may = math.floor(rule.get("max_mismatch_fraction", 0.0) * error.numel())  # as the judge counts them
    assert bad <= may, f"{where}: {bad} elements off (at most {may} may be), max abs error {error.max().item()}"


@pytest.mark.parametrize("W", [2, 4])
@pytest.mark.parametrize("name", PORTED)
def test_reference_matches_independent_computation(name, W):
    spec = toml_of(name)
    if W not in spec["world_sizes"]:
        pytest.skip(f"{name} does not support world size {W}")
    cases, results = run_world(W)
    checked = 0
    for index, case in enumerate(cases):
        if case["name"] != name:
            continue
        plan = case["plan"]
        where = f"{name} W={W} {plan['dtype']} trial {case['trial']} shape {plan['shape']}"
        args = [no_dist_inputs(name, W, r, case["trial"], case["seed"], plan["shape"], plan["dtype"])[1]
                for r in range(W)]
        mesh = dict(zip(plan["mesh"]["axes"], plan["mesh"]["sizes"])) if plan["mesh"] else {}
        outs, in_place = expected(name, args, W, mesh)
        loose = name in ("13_gemm_allreduce", "16_gemm_reducescatter") and plan["dtype"] == "bfloat16"
        bounds = bf16_gemm_bound(name, args, W) if loose else [None] * W
        declared = {o["path"]: o.get("dtype") for o in spec["outputs"]}
        for rank, got in enumerate(results[index]):
            assert got["inputs_fingerprint"] == fingerprint(args[rank]), f"{where}: rank {rank} built other inputs"
            # Outputs: every leaf declared, with its dtype, and right by its rule.
            got_leaves, want_leaves = _leaves(got["output"]), _leaves(outs[rank])
            assert [p for p, _ in got_leaves] == [p for p, _ in want_leaves], f"{where}: output structure"
            for (path, value), (_, want) in zip(got_leaves, want_leaves):
                if not isinstance(value, torch.Tensor):  # a plain value (a torch.Size ...): declared, equal
                    assert _rule_for(spec, path), f"{where}: {path} is not declared in [[outputs]]"
                    assert value == want, f"{where} rank {rank} {path}: {value!r}, expected {want!r}"
                    continue
                dtype = next((d for p, d in sorted(declared.items(), key=lambda pd: -len(pd[0]))
                              if path == p or path.startswith(p + "[")), None)
                wanted_dtype = plan["dtype"] if dtype == spec["dtype"] else dtype
                assert dtype is not None, f"{where}: {path} is not declared in [[outputs]]"
                assert str(value.dtype) == f"torch.{wanted_dtype}", f"{where}: {path} is {value.dtype}"
                _assert_close(f"{where} rank {rank} {path}", value, want, _rule_for(spec, path), spec, bounds[rank])
            # Inputs: the reference changes exactly the declared in-place arguments, to the right values.
            leaves_per_arg = [len(problem_api._leaves(a)) for a in args[rank]]
            flags = iter(got["mutated"])
            for i, count in enumerate(leaves_per_arg):
                changed = [next(flags) for _ in range(count)]
                if i not in in_place[rank]:
                    assert not any(changed), f"{where}: the reference changed argument {i}, not declared in place"
            for j, (i, want) in enumerate(sorted(in_place[rank].items())):
                for (path, value), (_, w) in zip(_leaves(got["in_place"][j], f"input[{i}]"),
                                                 _leaves(want, f"input[{i}]")):
                    _assert_close(f"{where} rank {rank} {path}", value, w, _rule_for(spec, path), spec)
            if spec["outputs"][0].get("keys"):
                assert got["judge"], f"{where}: the judge data is missing"
        checked += 1
    assert checked >= 1


@pytest.mark.parametrize("W", [2, 4])
def test_ulysses_attention_needs_its_communication(W):
    """39's answer depends on the other ranks' tokens: the answers a rank can compute alone (PKB's per-token head
    mixing, which needed no communication, and attention over its own block only) are far off it, by the
    problem's own rule, on nearly every element of every rank."""
    name = "39_ulysses_attention_e2e"
    spec = toml_of(name)
    for shape in (small(name), spec["shape"]):
        args = [no_dist_inputs(name, W, r, 1, SEED, shape)[1] for r in range(W)]
        want = ulysses_attention(args, W)
        for alone in (ulysses_head_mixing_alone, local_attention_alone):
            for rank, (got, right) in enumerate(zip(alone(args, W), want)):
                off = ((got - right).abs() > spec["atol"] + spec["rtol"] * right.abs()).double().mean().item()
                assert off > 0.9, f"{alone.__name__} W={W} rank {rank} shape {shape}: only {off:.1%} of it is off"
