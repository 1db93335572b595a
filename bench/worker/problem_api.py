"""The problem format's side of a rank (docs/problem_format.md): the process groups a problem declares,
the context its make_inputs receives, the check of the arguments it returns, and what is recorded of a
call for the judge.

The rank worker uses it through a few calls:
    problem = Problem(plan["problem"])                  the declarations the plan carries
    inputs = Inputs(problem, inputs_module, rank, world, device)
                                                        after init_process_group: builds the groups, once
    draw = Draw(trial, {"rank": seed, "shared": shared_seed}, timed=False, second=False)
                                                        which values one call's inputs take
    args = inputs.build(draw)                           its arguments, checked against problem.toml
    before = snapshot(problem, args)                    (reference) the inputs before the call
    trees, mutated = reference_record(problem, inputs, draw, args, out, before)
    trees = candidate_record(problem, args, out)        what tensor_file.write records
"""

import dataclasses
import itertools

import counter_fill
import generator_fill
import second_distribution
import tensor_file
import torch
import torch.distributed as dist

_new_group = dist.new_group
_WORLD = "world"


class InputError(Exception):
    """make_inputs returned something the declarations or the judge cannot accept; the message names
    the argument."""


class Problem:
    """The plan's "problem" object (bench/eval/worker_plan.h)."""

    def __init__(self, d):
        self.id = int(d["id"])
        self.name = d.get("name") or str(self.id)
        self.dtype = getattr(torch, d["dtype"])
        self.shape = dict(d.get("shape") or {})
        mesh = d.get("mesh")
        self.mesh = Mesh(mesh["axes"], mesh["sizes"]) if mesh else None
        self.args = list(d.get("args") or [])
        self.in_place = [int(i) for i in d.get("in_place") or []]
        self.judge_data = list(d.get("judge_data") or [])
        # Tensors above this many bytes are recorded as their digest; None: always in full.
        self.digest_above = d.get("digest_above_bytes")
        # What each kind of draw becomes in the trial that draws from the second distribution; None:
        # nothing changes (upstream problems).
        self.second = d.get("second_distribution")

    def arg_name(self, i):
        return f"argument '{self.args[i]['name']}' (input[{i}])" if i < len(self.args) else f"input[{i}]"


class Mesh:
    """Ranks laid out row-major over named axes (the first outermost). The group of an axis holds the
    ranks that differ from each other only in that axis's coordinate."""

    def __init__(self, axes, sizes):
        self.axes = list(axes)
        self.sizes = [int(s) for s in sizes]

    def coords(self, rank):
        out = {}
        for axis, size in zip(reversed(self.axes), reversed(self.sizes)):
            out[axis] = rank % size
            rank //= size
        return {a: out[a] for a in self.axes}

    def rank_of(self, coords):
        rank = 0
        for axis, size in zip(self.axes, self.sizes):
            rank = rank * size + coords[axis]
        return rank

    def groups_of(self, axis):
        """Every group of `axis` (lists of global ranks), in a fixed order."""
        others = [a for a in self.axes if a != axis]
        groups = []
        for fixed in itertools.product(*(range(self.sizes[self.axes.index(a)]) for a in others)):
            coords = dict(zip(others, fixed))
            groups.append([self.rank_of({**coords, axis: i}) for i in range(self.sizes[self.axes.index(axis)])])
        return groups


class StandInGroup:
    """A group's place in the arguments when no process group exists (the problems' no-dist tests)."""

    def __init__(self, name, ranks):
        self.name = name
        self.ranks = list(ranks)

    def __repr__(self):
        return f"StandInGroup({self.name!r}, {self.ranks})"


def build_groups(problem, rank, world):
    """The declared groups of this rank, {"world": dist.group.WORLD, axis: group}: every rank creates
    every group of every axis in the same order (new_group is collective), once per evaluation."""
    groups = {_WORLD: dist.group.WORLD}
    if problem.mesh:
        for axis in problem.mesh.axes:
            for ranks in problem.mesh.groups_of(axis):
                g = _new_group(ranks=ranks)
                if rank in ranks:
                    groups[axis] = g
    return groups


def stand_in_groups(problem, rank, world):
    groups = {_WORLD: StandInGroup(_WORLD, range(world))}
    if problem.mesh:
        for axis in problem.mesh.axes:
            groups[axis] = next(StandInGroup(axis, r) for r in problem.mesh.groups_of(axis) if rank in r)
    return groups


@dataclasses.dataclass(frozen=True)
class Draw:
    """Which values one call's inputs take: its trial, this rank's seeds ({"rank": its own, "shared":
    the same on every rank}), whether a timed call's (from torch's generators, else counter-based) and
    whether from the problem's second distribution. The reference's keys functions see the same."""
    trial: int
    seeds: dict
    timed: bool = False
    second: bool = False


def derived_seeds(base, rank, trial, call=None):
    """A call's seeds derived from one visible base seed, where no judge hands them out (the problems'
    tests): {"rank": this rank's own, "shared": the same on every rank}."""
    return {"rank": counter_fill.stream_key(base, "rank", rank, trial, call),
            "shared": counter_fill.stream_key(base, "shared", trial, call)}


class InputContext:
    """What make_inputs(ctx, **shape) receives (docs/problem_format.md, "inputs.py").

    Values come from streams keyed by the call's seed, the problem and the stream's name: counter-based
    (counter_fill) for a trial, whose reference outputs are cached, torch's generators (generator_fill)
    for a timed call, built a thousand times per trial.
    `seeds` holds this rank's own seed and the one every rank shares; a rank gets no other rank's, so it
    cannot compute another rank's inputs (and skip the communication). A tensor that the ranks of a mesh
    group share is drawn by the group's first rank and broadcast within the group."""

    def __init__(self, problem, rank, world, trial, seeds, device, groups, seeds_of=None, fills=counter_fill):
        self.problem = problem
        self._fills = fills
        self.problem_id = problem.id
        self.rank, self.world, self.trial, self.seeds = rank, world, trial, seeds
        self.device = device
        self.dtype = problem.dtype
        self.shape = dict(problem.shape)
        self.groups = groups
        self.mesh = dict(zip(problem.mesh.axes, problem.mesh.sizes)) if problem.mesh else {}
        self.coords = problem.mesh.coords(rank) if problem.mesh else {}
        self._seeds_of = seeds_of  # rank -> seeds, only where every rank's seeds are known (tests)

    def key(self, stream, same_on=None):
        """The stream's key: this rank's own (same_on None) or the one every rank shares ("world")."""
        if same_on not in (None, _WORLD):
            raise ValueError(f"a key is this rank's own or the world's, not the {same_on!r} group's")
        seed = self.seeds["shared" if same_on == _WORLD else "rank"]
        return counter_fill.stream_key(seed, self.problem_id, stream)

    def _draw(self, fill, shape, dtype, stream, same_on, *params):
        out = torch.empty(tuple(shape), dtype=dtype or self.dtype, device=self.device)
        if same_on in (None, _WORLD):
            return fill(out, self.key(stream, same_on), *params)
        group = self.groups[same_on]
        first = min(tensor_file.group_ranks(group))
        if isinstance(group, StandInGroup):  # no process group: compute what the first rank draws
            return self.for_rank(first)._draw(fill, shape, dtype, stream, None, *params)
        if self.rank == first:
            fill(out, self.key(stream), *params)
        dist.broadcast(out, src=first, group=group)
        return out

    def randn(self, shape, stream, *, same_on=None, dtype=None, mean=0.0, std=1.0):
        """A tensor of normal values (mean, std) on the device, in `dtype` (default: the problem's).
        same_on: None (this rank's own values), "world" (the same on every rank) or a mesh axis (the
        same on every rank of this rank's group along it)."""
        return self._draw(self._fills.fill_normal, shape, dtype, stream, same_on, mean, std)

    def rand(self, shape, stream, *, same_on=None, dtype=None, low=0.0, high=1.0):
        """A tensor of values uniform in [low, high) on the device."""
        return self._draw(self._fills.fill_uniform, shape, dtype, stream, same_on, low, high)

    def randint(self, shape, stream, low, high, *, same_on=None, dtype=torch.int64):
        """A tensor of integers uniform in [low, high) on the device."""
        return self._draw(self._fills.fill_integers, shape, dtype, stream, same_on, low, high)

    def generator(self, stream, same_on=None):
        """A CPU torch.Generator seeded from the stream's key, for what the fills do not cover
        (torch.randperm, torch.multinomial); this rank's own or the world's."""
        return torch.Generator(device="cpu").manual_seed(self.key(stream, same_on) >> 1)

    def for_rank(self, rank):
        """The context of rank `rank` in the same call, with stand-in groups: only where every rank's
        seeds are known (the problems' tests), never in an evaluation."""
        if self._seeds_of is None:
            raise RuntimeError("another rank's inputs cannot be computed here: the judge gives each rank its own seed")
        return InputContext(self.problem, rank, self.world, self.trial, self._seeds_of(rank), self.device,
                            stand_in_groups(self.problem, rank, self.world), self._seeds_of, self._fills)


class Inputs:
    """Builds one rank's argument tuples. `module` holds make_inputs (and the keys functions).
    `seeds_of(rank, trial)`, where given, lets a context compute other ranks' values (tests)."""

    def __init__(self, problem, module, rank, world, device, groups=None, seeds_of=None):
        self.problem, self.module = problem, module
        self.rank, self.world, self.device = rank, world, device
        self.groups = build_groups(problem, rank, world) if groups is None else groups
        self.seeds_of = seeds_of

    def context(self, draw):
        others = (lambda r: self.seeds_of(r, draw.trial)) if self.seeds_of else None
        usual = generator_fill if draw.timed else counter_fill
        fills = second_distribution.fills(usual, self.problem.second if draw.second else None)
        return InputContext(self.problem, self.rank, self.world, draw.trial, draw.seeds, self.device, self.groups,
                            others, fills)

    def build(self, draw):
        """One call's arguments as `draw` (a Draw) says, checked against the declarations."""
        ctx = self.context(draw)
        args = self.module.make_inputs(ctx, **self.problem.shape)
        if not isinstance(args, (tuple, list)):
            raise InputError(f"make_inputs returned a {type(args).__name__}, not the tuple of solution()'s arguments")
        args = tuple(args)
        check_args(self.problem, args, ctx)
        return args


_PLAIN = {"int": int, "float": (int, float), "bool": bool}


def _is_shape(v):
    return isinstance(v, (list, tuple)) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in v)


def _check_tensor(problem, i, t, decl, ctx, where):
    if not isinstance(t, torch.Tensor):
        raise InputError(f"{where} is a {type(t).__name__}, declared a tensor")
    if t.layout != torch.strided:
        raise InputError(f"{where} is a tensor of layout {t.layout}: the judge records dense tensors only, so "
                         "pass its parts (e.g. a sparse tensor's indices and values) as dense tensors")
    want = getattr(torch, decl.get("dtype") or "", None)
    if want is not None and t.dtype != want:
        raise InputError(f"{where} has dtype {t.dtype}, declared {want}")
    if t.device.type != torch.device(ctx.device).type:
        raise InputError(f"{where} is on {t.device}, not on the rank's device {ctx.device}")


def check_args(problem, args, ctx):
    """Refuses, naming the argument, what contradicts the declarations or cannot be recorded."""
    decls = problem.args
    if decls and len(args) != len(decls):
        names = ", ".join(d["name"] for d in decls)
        raise InputError(f"make_inputs returned {len(args)} arguments, problem.toml declares {len(decls)} ({names})")
    for i, (x, decl) in enumerate(zip(args, decls)):
        where, kind = problem.arg_name(i), decl["type"]
        if kind == "tensor":
            _check_tensor(problem, i, x, decl, ctx, where)
        elif kind == "tensors":
            if not isinstance(x, (list, tuple)):
                raise InputError(f"{where} is a {type(x).__name__}, declared a list of tensors")
            for j, t in enumerate(x):
                _check_tensor(problem, i, t, decl, ctx, f"{where}[{j}]")
        elif kind in _PLAIN:
            if isinstance(x, bool) != (kind == "bool") or not isinstance(x, _PLAIN[kind]):
                raise InputError(f"{where} is {x!r}, declared {kind}")
        elif kind == "ints":
            if not isinstance(x, (list, tuple)) or not all(isinstance(v, int) and not isinstance(v, bool) for v in x):
                raise InputError(f"{where} is {x!r}, declared a list of ints")
        elif kind == "shapes":
            if not isinstance(x, (list, tuple)) or not all(_is_shape(v) for v in x):
                raise InputError(f"{where} is {x!r}, declared a list of shapes (tuples of ints >= 0)")
        elif kind == "none":
            if x is not None:
                raise InputError(f"{where} is {type(x).__name__}, declared None")
        elif kind == "group":
            if x is not ctx.groups.get(decl["group"]):
                raise InputError(f"{where} is not the declared group '{decl['group']}' (use ctx.groups"
                                 f"[{decl['group']!r}])")
    try:
        tensor_file.check(args, "input")
    except tensor_file.Unrecordable as e:
        raise InputError(str(e)) from e


# ---------------------------------------------------------------------------------------------------
# Records for the judge. Leaves are visited in the judge's order (bench/eval/tensor_compare.cc, input_leaves):
# depth first, dict keys before values, a sparse tensor's indices before its values.

def _too_big(problem, t):
    return problem.digest_above is not None and t.numel() * t.element_size() > problem.digest_above


def _bits(t):
    t = t.detach().to("cpu").contiguous().reshape(-1)
    if t.is_complex():
        t = torch.view_as_real(t).reshape(-1)
    return t.view(torch.uint8)


def map_nest(fn, x):
    """`x` with fn applied to each leaf, keeping the nesting: tuples and lists (not torch.Size, a shape)
    and dict values are walked, everything else is a leaf. The one notion of a nest that records,
    snapshots and the timed calls' copies share."""
    if isinstance(x, (tuple, list)) and not isinstance(x, torch.Size):
        return type(x)(map_nest(fn, v) for v in x)
    if isinstance(x, dict):
        return {k: map_nest(fn, v) for k, v in x.items()}
    return fn(x)


def snapshot(problem, args):
    """The inputs as they are now: tensors cloned, those above the digest threshold as their digest,
    other values as they are."""
    def leaf(x):
        if isinstance(x, torch.Tensor):
            if x.layout == torch.sparse_coo:
                return x.detach().coalesce().clone()
            if _too_big(problem, x):
                return tensor_file.Digest(x, counter_fill.digest(x))
            return x.detach().clone()
        return x

    return map_nest(leaf, args)


def _leaves(x):
    """The tensor leaves of a tree, in the judge's order (sparse: indices, values)."""
    if isinstance(x, (torch.Tensor, tensor_file.Digest)):
        if isinstance(x, torch.Tensor) and x.layout == torch.sparse_coo:
            x = x.coalesce()
            return [x.indices(), x.values()]
        return [x]
    if isinstance(x, (tuple, list)) and not isinstance(x, torch.Size):
        return [leaf for v in x for leaf in _leaves(v)]
    if isinstance(x, dict):
        return [leaf for k, v in x.items() for leaf in _leaves(k) + _leaves(v)]
    return []


def _same(before, now):
    if isinstance(before, tensor_file.Digest):
        return isinstance(now, torch.Tensor) and before == tensor_file.Digest(now, counter_fill.digest(now))
    return (isinstance(now, torch.Tensor) and now.shape == before.shape and now.dtype == before.dtype
            and torch.equal(_bits(now), _bits(before)))


def mutated(before, args):
    """Per tensor leaf of the inputs, in the judge's order: did the call change it (bitwise)?"""
    b, a = _leaves(before), _leaves(args)
    return [i >= len(a) or not _same(leaf, a[i]) for i, leaf in enumerate(b)]


def recorded_inputs(problem, args):
    """The inputs as the candidate's record holds them after its call: in full, except tensors above the
    digest threshold in arguments that are not in place."""
    def leaf(x):
        if isinstance(x, torch.Tensor) and x.layout == torch.strided and _too_big(problem, x):
            return tensor_file.Digest(x, counter_fill.digest(x))
        return x

    return tuple(a if i in problem.in_place else map_nest(leaf, a) for i, a in enumerate(args))


def reference_record(problem, inputs, draw, args, out, before):
    """The reference run's record and its per-leaf mutated flags: outputs, the inputs before the call,
    the in-place arguments after it, and the judge data of tie-aware rules (keys functions may use
    collectives: every rank records together)."""
    trees = {"output": out, "inputs": before}
    if problem.in_place:
        for i in problem.in_place:
            if any(_too_big(problem, t) for t in _leaves(args[i]) if isinstance(t, torch.Tensor)):
                raise InputError(f"{problem.arg_name(i)} is in place but larger than the digest threshold of "
                                 f"{problem.digest_above} bytes, so it cannot be compared")
        trees["in_place"] = tuple(args[i] for i in problem.in_place)
    if problem.judge_data:
        ctx = inputs.context(draw)
        judge = {}
        for name in problem.judge_data:
            fn = getattr(inputs.module, name, None)
            if not callable(fn):
                raise InputError(f"problem.toml names the keys function {name}(), which inputs.py does not define")
            judge[name] = fn(ctx, args, out)
        trees["judge"] = judge
    return trees, mutated(before, args)


def candidate_record(problem, args, out):
    return {"output": out, "inputs": recorded_inputs(problem, args)}
