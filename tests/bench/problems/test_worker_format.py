"""The worker's side of the problem format, piece by piece (no process group): counter-based values and
digests (bench/worker/counter_fill.py), meshes, input records and what a call changed
(bench/worker/problem_api.py), and what the recorder refuses (bench/worker/tensor_file.py). The groups
themselves are built under gloo at world sizes 2 and 4 by test_problems.py's distributed runs."""

import json
import struct

import pytest
import torch

from declared import problem_api

import counter_fill  # noqa: E402 - bench/worker is on the path through declared
import generator_fill  # noqa: E402
import second_distribution  # noqa: E402
import tensor_file  # noqa: E402


def test_counter_values_are_addressable_deterministic_and_finite(monkeypatch):
    key = counter_fill.stream_key(42, 21, 0, 0, "c", "x")
    big = counter_fill.fill_normal(torch.empty(100_000), key)
    assert torch.equal(big, counter_fill.fill_normal(torch.empty(100_000), key))
    assert torch.isfinite(big).all() and abs(big.mean().item()) < 0.02 and abs(big.std().item() - 1) < 0.02
    # Element i depends on (key, i) only: a shorter tensor is a prefix of a longer one, and filling in small
    # chunks changes nothing.
    assert torch.equal(counter_fill.fill_normal(torch.empty(1000), key), big[:1000])
    monkeypatch.setattr(counter_fill, "CHUNK", 333)
    assert torch.equal(counter_fill.fill_normal(torch.empty(2000), key), big[:2000])
    # The extreme bit patterns stay finite through the inverse normal CDF.
    extremes = counter_fill._unit(torch.tensor([0, (1 << counter_fill.BITS) - 1], dtype=torch.int64)) * 2 - 1
    assert torch.isfinite(torch.erfinv(extremes)).all()
    other = counter_fill.fill_normal(torch.empty(1000), counter_fill.stream_key(42, 21, 1, 0, "c", "x"))
    assert not torch.equal(other, big[:1000])
    ints = counter_fill.fill_integers(torch.empty(100000, dtype=torch.int64), key, -3, 4)
    assert ints.min() == -3 and ints.max() == 3 and torch.bincount(ints + 3).min() > 13000
    wide = counter_fill.fill_integers(torch.empty(1000, dtype=torch.int64), key, 0, 1 << 40)
    assert wide.max() > 1 << 32
    uniform = counter_fill.fill_uniform(torch.empty(10000, dtype=torch.bfloat16), key, -2, 3)
    assert uniform.min() >= -2 and uniform.max() <= 3


def test_generator_values_are_seeded_by_their_key_alone(monkeypatch):
    key = counter_fill.stream_key(42, 21, 0, 0, "c", "x")
    other = counter_fill.stream_key(42, 21, 1, 0, "c", "x")
    normal = generator_fill.fill_normal(torch.empty(100_000), key)
    torch.manual_seed(7)  # the global generator is neither read nor moved
    assert torch.equal(normal, generator_fill.fill_normal(torch.empty(100_000), key))
    assert not torch.equal(normal, generator_fill.fill_normal(torch.empty(100_000), other))
    assert abs(normal.mean().item()) < 0.02 and abs(normal.std().item() - 1) < 0.02
    ints = generator_fill.fill_integers(torch.empty(100_000, dtype=torch.int64), key, -3, 4)
    assert ints.min() == -3 and ints.max() == 3 and torch.bincount(ints + 3).min() > 13000
    assert generator_fill.fill_integers(torch.empty(1000, dtype=torch.int64), key, 0, 1 << 40).max() > 1 << 32
    # bf16 holds the integers of [-64, 65) exactly and gets them at once; beyond 256 through int64.
    small = generator_fill.fill_integers(torch.empty(10_000, dtype=torch.bfloat16), key, -64, 65)
    assert small.min() == -64 and small.max() == 64 and torch.equal(small, small.round())
    wide = generator_fill.fill_integers(torch.empty(10_000, dtype=torch.bfloat16), key, 0, 4096)
    assert wide.max() > 256
    uniform = generator_fill.fill_uniform(torch.empty(10_000, dtype=torch.bfloat16), key, -2, 3)
    assert uniform.min() >= -2 and uniform.max() <= 3
    # Dtypes without a fill of their own go through float32 or int64 pieces.
    monkeypatch.setattr(generator_fill, "CHUNK", 333)
    fp8 = generator_fill.fill_normal(torch.empty(1000, dtype=torch.float8_e4m3fn), key)
    assert torch.isfinite(fp8.float()).all() and fp8.float().std() > 0.5
    flags = generator_fill.fill_integers(torch.empty(1000, dtype=torch.bool), key, 0, 2)
    assert 300 < int(flags.sum()) < 700
    # Bound at import: a candidate that patches the tensor methods changes no input.
    monkeypatch.setattr(torch.Tensor, "normal_", lambda t, *a, **k: t.zero_())
    assert torch.equal(normal, generator_fill.fill_normal(torch.empty(100_000), key))


def test_digests_see_every_byte_dtype_and_shape():
    t = counter_fill.fill_normal(torch.empty(1001), 5)  # 4004 bytes: words and no tail; bf16 below has a tail
    d = counter_fill.digest(t)
    assert d == counter_fill.digest(t.clone())
    for changed in (t.clone().index_fill_(0, torch.tensor([1000]), 0.5), t.view(7, 143), t.to(torch.float64)):
        assert counter_fill.digest(changed) != d
    odd = t[:3].to(torch.bfloat16)
    flipped = odd.clone()
    flipped.view(torch.int16)[2] ^= 1
    assert counter_fill.digest(odd) != counter_fill.digest(flipped)
    z = torch.zeros(2, dtype=torch.complex64)
    assert counter_fill.digest(z) != counter_fill.digest(torch.zeros(4))


def test_mesh_coordinates_and_groups_are_row_major():
    mesh = problem_api.Mesh(["cp", "tp"], [2, 2])
    assert [mesh.coords(r) for r in range(4)] == [{"cp": 0, "tp": 0}, {"cp": 0, "tp": 1}, {"cp": 1, "tp": 0},
                                                   {"cp": 1, "tp": 1}]
    assert mesh.groups_of("tp") == [[0, 1], [2, 3]]
    assert mesh.groups_of("cp") == [[0, 2], [1, 3]]
    wide = problem_api.Mesh(["a", "b", "c"], [2, 1, 3])
    assert wide.groups_of("c") == [[0, 1, 2], [3, 4, 5]] and wide.groups_of("a") == [[0, 3], [1, 4], [2, 5]]
    assert all(wide.rank_of(wide.coords(r)) == r for r in range(6))


def _problem(in_place=(), digest_above=64):
    return problem_api.Problem({"id": 9, "dtype": "float32", "in_place": list(in_place),
                                "digest_above_bytes": digest_above})


def test_records_digest_large_inputs_and_flag_what_the_call_changed():
    problem = _problem(in_place=[2])
    small, large, grads = torch.ones(4), torch.arange(100, dtype=torch.float32), [torch.ones(2), torch.ones(3)]
    sparse = torch.sparse_coo_tensor(torch.tensor([[0, 2]]), torch.tensor([1.0, 2.0]), (4,), check_invariants=True)
    args = (small, large, grads, {"k": sparse}, 3)
    before = problem_api.snapshot(problem, args)
    assert isinstance(before[1], tensor_file.Digest) and isinstance(before[0], torch.Tensor)
    assert problem_api.mutated(before, args) == [False] * 6  # small, large, 2 grads, sparse indices + values
    large[7] = -1
    grads[1].mul_(0.5)
    assert problem_api.mutated(before, args) == [False, True, False, True, False, False]
    recorded = problem_api.recorded_inputs(problem, args)
    assert isinstance(recorded[1], tensor_file.Digest) and recorded[2] is grads  # in place: in full


def test_the_reference_record_holds_in_place_results_and_judge_data(tmp_path):
    class Module:
        @staticmethod
        def make_inputs(ctx):
            return ([ctx.randn((3,), "g")],)

        @staticmethod
        def keys(ctx, args, out):
            return args[0][0] * 2

    problem = problem_api.Problem({"id": 9, "dtype": "float32", "in_place": [0], "judge_data": ["keys"],
                                   "args": [{"name": "grads", "type": "tensors", "dtype": "float32"}]})
    inputs = problem_api.Inputs(problem, Module, 0, 1, "cpu", groups={"world": None})
    draw = problem_api.Draw(0, problem_api.derived_seeds(7, 0, 0))
    args = inputs.build(draw)
    before = problem_api.snapshot(problem, args)
    args[0][0].mul_(0.5)
    trees, flags = problem_api.reference_record(problem, inputs, draw, args, torch.zeros(()), before)
    assert flags == [True]
    assert torch.equal(trees["in_place"][0][0], args[0][0]) and torch.equal(trees["judge"]["keys"], args[0][0] * 2)
    tensor_file.write(tmp_path / "r.st", trees)
    raw = (tmp_path / "r.st").read_bytes()
    header = json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])
    tree = json.loads(header["__metadata__"]["tree"])
    assert set(tree) == {"output", "inputs", "in_place", "judge"}
    assert tree["judge"]["dict"][0][0] == {"value": "keys"}


def test_the_recorder_names_what_it_refuses():
    with pytest.raises(tensor_file.Unrecordable, match=r"output\[1\]\['w'\]: a torch.nn.modules.linear.Linear"):
        tensor_file.check((torch.ones(1), {"w": torch.nn.Linear(1, 1)}), "output")
    with pytest.raises(tensor_file.Unrecordable, match=r"input\[0\]: a tensor of layout torch.sparse_csr"):
        tensor_file.check((torch.eye(2).to_sparse_csr(),), "input")
    with pytest.raises(tensor_file.Unrecordable, match=r"output: a builtins.function"):
        tensor_file.check(lambda: 0, "output")
    tensor_file.check((torch.ones(1), None, 1.5, "text", torch.Size([2]), torch.float32,
                       problem_api.StandInGroup("world", [0, 1])), "input")


def test_values_shared_along_a_mesh_axis_come_from_the_group_s_first_rank():
    problem = problem_api.Problem({"id": 9, "dtype": "float32", "mesh": {"axes": ["cp", "tp"], "sizes": [2, 2]}})

    def context(rank, with_others=True):
        others = (lambda r: problem_api.derived_seeds(5, r, 0)) if with_others else None
        return problem_api.InputContext(problem, rank, 4, 0, problem_api.derived_seeds(5, rank, 0), "cpu",
                                        problem_api.stand_in_groups(problem, rank, 4), others)

    by_tp = [context(r).randn((8,), "x", same_on="tp") for r in range(4)]
    assert torch.equal(by_tp[0], by_tp[1]) and torch.equal(by_tp[2], by_tp[3])  # tp groups {0, 1}, {2, 3}
    assert not torch.equal(by_tp[0], by_tp[2])
    assert torch.equal(by_tp[2], context(2).randn((8,), "x"))  # rank 2 is its group's first: its own values
    world = [context(r).randn((8,), "x", same_on="world") for r in range(4)]
    assert all(torch.equal(world[0], w) for w in world)
    own = [context(r).randn((8,), "x") for r in range(4)]
    assert len({tuple(t.tolist()) for t in own}) == 4
    with pytest.raises(RuntimeError, match="its own seed"):
        context(1, with_others=False).randn((8,), "x", same_on="tp")


@pytest.mark.parametrize("usual", [counter_fill, generator_fill], ids=["trial", "timed"])
def test_the_second_distribution_changes_the_shape_of_draws_and_keeps_their_ranges(usual):
    key = counter_fill.stream_key(7, 13, "x")
    n = 200_000

    def second(**change):
        return second_distribution.Fills(usual, change)

    plain = usual.fill_normal(torch.empty(n), key, 1.0, 2.0)
    heavy = second(normal="heavy_tailed").fill_normal(torch.empty(n), key, 1.0, 2.0)
    assert torch.equal(heavy, second(normal="heavy_tailed").fill_normal(torch.empty(n), key, 1.0, 2.0))
    assert torch.isfinite(heavy).all() and (heavy - 1).abs().max() <= 2 * 100 * 6
    # Centred where the usual draw is, with tails far beyond it: a normal's kurtosis is 3.
    z = (heavy - 1) / 2
    assert abs(heavy.median().item() - 1) < 0.05
    assert (z ** 4).mean().item() / (z ** 2).mean().item() ** 2 > 10
    assert (z.abs() > 6).sum() > 20 and ((plain - 1) / 2).abs().max() < 6
    shifted = second(normal="shifted_scaled").fill_normal(torch.empty(n), key, 1.0, 2.0)
    assert abs(shifted.mean().item() - 3) < 0.1 and abs(shifted.std().item() - 8) < 0.1
    # Uniform and integer draws keep their range, most of their mass near its low end (u^3: a mean
    # of a quarter of the way).
    u = second(uniform="skewed").fill_uniform(torch.empty(n), key, -2.0, 6.0)
    assert u.min() >= -2 and u.max() < 6 and abs(u.mean().item() - 0.0) < 0.05
    for dtype in (torch.int64, torch.bfloat16):
        i = second(integers="skewed").fill_integers(torch.empty(n, dtype=dtype), key, -64, 65)
        assert i.min() == -64 and i.max() <= 64 and torch.equal(i, i.round())
        assert abs(i.double().mean().item() - (-64 + 129 / 4 - 0.5)) < 0.5
    # What the problem leaves the same is the usual draw.
    same = second(normal="heavy_tailed")
    assert torch.equal(same.fill_uniform(torch.empty(1000), key, 0, 1), usual.fill_uniform(torch.empty(1000), key, 0, 1))
    assert second_distribution.fills(usual, None) is usual

