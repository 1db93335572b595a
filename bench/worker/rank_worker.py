"""One rank of one side of an evaluation: imports its code, then does what the judge asks.

An evaluation runs two process sets on the same GPUs, each in its own sandbox: the reference's
(reference.py and the input generator, no candidate file) and the candidate's (the candidate and the
input generator, no reference). pkagent starts each set (`pkagent _ranks`), one process per rank, with
RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT and PK_JUDGE_SOCKET set, possibly ahead of
need: a rank imports torch and this worker, connects to the judge's socket, and waits for `go` with
its plan (JSON). Then it imports its code, joins its set's process group and says `ready`; from then
on it only answers commands, one JSON line each way:

  trial        build the trial's inputs from the seed it is given, call `solution`, record the
               outputs and inputs (reference: inputs before the call and which ones it changed;
               candidate: inputs after the call) in a tensor file
  prepare      build one input set per call of the next block, from the per-call seeds it is given
  block        run the block's calls, timed (timing.py); keep each call's outputs; when asked
               ("commit"), follow the block's answer at once with a second one: a commitment to each
               output of the block (tensor_file.commitment), before the judge names a call to check
  record_call  write one call of the last block (outputs and inputs) to a tensor file
  shutdown     leave the process group and exit

The judge decides everything else: seeds (drawn from a secret the ranks never see, one per rank and
call, so no input tells anything about the next), the order of blocks, which calls are checked, and
the verdict; between commands it keeps the rank stopped. Nothing a rank reports is trusted beyond
being its claim, except a report against itself (NVLink multicast switched back on).
"""

import ctypes
import importlib.util
import json
import os
import socket
import sys
import time
import traceback
import types

# Bound before any candidate code runs.
import counter_fill
import gloo_like_nccl
import problem_api
import tensor_file
import timing
import torch
import torch.distributed as dist

_write_tensors = tensor_file.write
_commitment = tensor_file.commitment
_commits_of = counter_fill.commits_of
_init_process_group = dist.init_process_group
_synchronize = torch.cuda.synchronize
_barrier = dist.barrier
_Tensor = torch.Tensor
_environ = os.environ


def _c_getenv():
    """libc's getenv: the environment native code (NCCL, NVSHMEM) reads, which ctypes can change
    without os.environ knowing."""
    try:
        fn = ctypes.CDLL(None).getenv
    except (OSError, AttributeError):
        return lambda name: None
    fn.argtypes, fn.restype = [ctypes.c_char_p], ctypes.c_char_p

    def getenv(name):
        v = fn(name.encode())
        return None if v is None else v.decode(errors="replace")
    return getenv


_getenv = _c_getenv()

EXIT_FAILED = 3  # the rank reported an error to the judge


class WorkerError(Exception):
    """An expected failure, reported as `kind` (import_error, no_solution, call_error ...)."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


class Channel:
    """Newline-delimited JSON over the judge's Unix socket."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.reader = self.sock.makefile("rb")

    def send(self, message):
        self.sock.sendall(json.dumps(message).encode() + b"\n")

    def receive(self):
        line = self.reader.readline()
        if not line:
            raise EOFError("the judge closed the connection")
        return json.loads(line)


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


class _GroupsOnce:
    """torch.distributed as PKB's generator sees it, except that new_group returns the group it made
    before for the same ranks: the generator builds its meshes on every call, and every call builds
    inputs."""

    def __init__(self):
        self._made = {}

    def __getattr__(self, name):
        return getattr(dist, name)

    def new_group(self, ranks=None, **kwargs):
        key = (tuple(ranks) if ranks is not None else None, tuple(sorted(kwargs.items())))
        if key not in self._made:
            self._made[key] = dist.new_group(ranks=ranks, **kwargs)
        return self._made[key]


def upstream_inputs_module(root, problem_id):
    """Upstream mode: ParallelKernelBench's own generator, utils/input_output_tensors.py of the
    checkout staged at `root`, behind our make_inputs interface. The root goes on sys.path (as PKB's
    worker puts its project root there), so PKB solutions that import utils.* run unchanged. PKB's
    generator seeds the global RNG from (problem id, rank, trial) itself: the seeds are unused."""
    sys.path.insert(0, os.path.abspath(root))
    try:
        generator = importlib.import_module("utils.input_output_tensors")
        create = generator.create_input_tensor
    except BaseException as e:  # noqa: BLE001 - anything the module does at import time
        raise WorkerError("generator_error", "importing ParallelKernelBench's input generator "
                          f"utils/input_output_tensors.py (create_input_tensor) failed: {type(e).__name__}: {e}\n"
                          f"{traceback.format_exc()}") from e
    if getattr(generator, "dist", None) is dist:
        generator.dist = _GroupsOnce()

    def make_inputs(ctx, M, N):
        return create(ctx.rank, ctx.world, problem_id, (M, N), ctx.dtype, trial=ctx.trial, device=ctx.device)

    return types.SimpleNamespace(make_inputs=make_inputs)


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
    return problem_api.map_nest(lambda v: v.detach().clone() if type(v) is _Tensor else v, x)


def plain_output_problem(x, device, path="output"):
    """Why `x` is not a plain result (exact torch.Tensor leaves, dense, on the rank's device or the host); None
    when it is. A subclass or a lazy object could compute or fake its values when it is recorded."""
    if isinstance(x, _Tensor):
        if type(x) is not _Tensor:
            return f"{path} is a {type(x).__module__}.{type(x).__qualname__}, not a plain torch.Tensor"
        if x.layout != torch.strided:
            return f"{path} has layout {x.layout}; return dense tensors"
        # The host is allowed: some references return split sizes and counts as CPU tensors, as
        # the code they come from hands them to host-side collectives.
        if x.device != device and x.device.type != "cpu":
            return f"{path} is on {x.device}, neither this rank's device {device} nor the host"
        return None
    if isinstance(x, (tuple, list)) and not isinstance(x, torch.Size):
        for i, v in enumerate(x):
            why = plain_output_problem(v, device, f"{path}[{i}]")
            if why:
                return why
        return None
    if isinstance(x, dict):
        for k, v in x.items():
            why = plain_output_problem(v, device, f"{path}[{k!r}]")
            if why:
                return why
        return None
    if x is None or isinstance(x, (bool, int, float, str, torch.Size, torch.dtype)):
        return None
    return f"{path} is a {type(x).__name__}; return tensors and plain values only"


def rendezvous_store():
    """The set's rendezvous store, held from the rank's start: rank 0 listens on the port the supervisor
    found free at once, so no set started while this one waits for its evaluation can take that port."""
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    return dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world, is_master=rank == 0,
                         wait_for_workers=False)


def init_distributed(device, rank, world, store):
    if device == "cuda":
        local = int(os.environ.get("LOCAL_RANK", rank))
        torch.cuda.set_device(local)
        dev = torch.device("cuda", local)
        _init_process_group("nccl", store=store, rank=rank, world_size=world, device_id=dev)
        return dev
    _init_process_group("gloo", store=store, rank=rank, world_size=world)
    return torch.device("cpu")


class Rank:
    def __init__(self, plan, store):
        self.plan = plan
        self.store = store  # the set's rendezvous (rendezvous_store)
        self.rank = int(os.environ["RANK"])
        self.world = int(os.environ["WORLD_SIZE"])
        self.dir = os.path.join(plan["out_dir"], f"rank{self.rank}")
        os.makedirs(self.dir, exist_ok=True)
        self.side = plan["side"]
        self.phases = []
        self.phase_name, self.phase_t0 = None, time.monotonic()
        self.fn = None
        self.block_inputs, self.block_draws, self.block_outputs = [], [], []
        self.block_what = "the last timing block"
        self.graph = None

    def phase(self, name):
        now = time.monotonic()
        if self.phase_name is not None:
            self.phases.append([self.phase_name, round(now - self.phase_t0, 4)])
        self.phase_name, self.phase_t0 = name, now

    # -- start-up ------------------------------------------------------------------------------------

    def start(self):
        """Imports (before the process group exists, as PKB does), joins the process group."""
        plan, problem = self.plan, self.plan["problem"]
        self.phase("import")
        if plan["device"] != "cuda":
            # Before any problem or candidate code is imported, so that every way of naming the
            # collectives reaches NCCL's rules.
            gloo_like_nccl.install()
        self.problem = problem_api.Problem(problem)
        if problem.get("upstream_root"):
            inputs_module = upstream_inputs_module(problem["upstream_root"], self.problem.id)
        else:
            inputs_module = load_module("pk_inputs", problem["inputs"], "generator_error")
        self.threads_before = timing.active_threads()
        if self.side == "reference":
            self.fn = solution_of(load_module("pk_reference", problem["reference"], "harness_error"),
                                  problem["reference"])
        else:
            path = plan["candidate"]
            self.fn = solution_of(load_module("solution_mod", path, "import_error"), path)
        self.check_multicast_off("after importing the candidate")
        self.phase("init")
        self.device = init_distributed(plan["device"], self.rank, self.world, self.store)
        self.cuda = self.device.type == "cuda"
        # The problem's declared process groups, built once, now that the process group exists.
        self.problem_inputs = self.harness("building the declared process groups", lambda: problem_api.Inputs(
            self.problem, inputs_module, self.rank, self.world, self.device))
        self.clock = timing.clock_for(str(self.device))
        self.phase("ready")

    def check_multicast_off(self, when):
        """The variables that keep NVLink multicast off (the judge sets them in every rank, and the
        communicators read them when they are made) must still hold after candidate code ran, as
        Python and native code see them. A candidate that switched multicast back on is refused
        before any communicator of its process group reads them (the verdict `forbidden`)."""
        for name, value in (self.plan.get("multicast_off") or {}).items():
            for seen, where in ((_environ.get(name), "os.environ"), (_getenv(name), "the C environment")):
                if seen != value:
                    raise WorkerError("multicast", f"{when}, {name} is {seen!r} in {where}, not {value!r}: "
                                      "the candidate switched NVLink multicast back on (the judge keeps it off "
                                      "in every rank, and a solution must leave it so)")

    @staticmethod
    def harness(what, work):
        """Runs the evaluator's own step `work`; any failure is a harness_error naming `what`."""
        try:
            return work()
        except BaseException as e:  # noqa: BLE001
            raise WorkerError("harness_error", f"{what} failed: {type(e).__name__}: {e}\n"
                              f"{traceback.format_exc()}") from e

    @staticmethod
    def seeds(seed, shared_seed):
        return {"rank": int(seed), "shared": int(shared_seed)}

    def inputs(self, draw):
        return self.harness("make_inputs", lambda: self.problem_inputs.build(draw))

    def snapshot(self, args):
        """The inputs as they are before the reference's call (bench/worker/problem_api.py)."""
        return self.harness("recording the inputs", lambda: problem_api.snapshot(self.problem, args))

    def reference_record(self, draw, args, out, before):
        """The trees a reference call records, and which inputs it changed."""
        return self.harness("recording the reference's call", lambda: problem_api.reference_record(
            self.problem, self.problem_inputs, draw, args, out, before))

    def call(self, args, what):
        try:
            return self.fn(*args)
        except BaseException as e:  # noqa: BLE001
            raise WorkerError("call_error", f"solution(...) raised {type(e).__name__} in {what}: "
                              f"{e}\n{candidate_traceback(e)}") from e

    def check_plain(self, out, what):
        why = plain_output_problem(out, self.device)
        if why:
            raise WorkerError("bad_output", f"the value returned by solution(...) in {what}: {why}")

    def write(self, name, trees, what):
        try:
            _write_tensors(os.path.join(self.dir, name), trees)
        except BaseException as e:  # noqa: BLE001
            raise WorkerError("call_error", f"the value returned by solution(...) in {what} "
                              f"cannot be recorded: {type(e).__name__}: {e}") from e

    # -- commands ------------------------------------------------------------------------------------

    def cmd_trial(self, c):
        trial = int(c["trial"])
        what = f"trial {trial}"
        self.phase(what)
        draw = problem_api.Draw(trial, self.seeds(c["seed"], c["shared_seed"]),
                                second=bool(c.get("second_distribution", False)))
        args = self.inputs(draw)
        before = self.snapshot(args) if self.side == "reference" else None
        out = self.call(args, what)
        if self.cuda:
            _synchronize()
        _barrier()
        self.check_multicast_off(f"after {what}")
        self.check_plain(out, what)
        reply = {"ok": True, "threads": timing.active_threads()}
        if before is not None:
            trees, reply["mutated"] = self.reference_record(draw, args, out, before)
        else:
            trees = problem_api.candidate_record(self.problem, args, out)
        self.write(c["file"], trees, what)
        return reply

    def cmd_prepare(self, c):
        trial = int(c["trial"])
        shared = int(c["shared_seed"])
        second = bool(c.get("second_distribution", False))
        self.block_draws = [problem_api.Draw(trial, self.seeds(s, shared), timed=True, second=second)
                            for s in c["seeds"]]
        # The last block's inputs and outputs go before the next ones are built: with both sets on
        # one GPU, holding two blocks' worth per process doubled the peak of large problems (68).
        self.block_outputs = []
        self.block_inputs = []
        self.block_inputs = [self.inputs(d) for d in self.block_draws]
        if self.cuda:
            _synchronize()
        return {"ok": True}

    def cmd_block(self, c):
        what = f"timing block {c.get('block', '?')}"
        self.phase(what)
        hold = float(c.get("hold_ms", 0))
        if c.get("null"):
            calls = [(lambda: None)] * int(c.get("calls", 1))
        elif self.plan.get("cuda_graph") and self.cuda:
            calls = self.graph_calls()
        else:
            fn = self.fn
            calls = [(lambda a=a: fn(*a)) for a in self.block_inputs]
        outputs = [None] * len(calls)

        def keep(i, out):
            outputs[i] = tensors_of(out)

        try:
            ms, enqueue_ms, span_ms = self.clock.block(calls, hold, keep)
        except WorkerError:
            raise
        except BaseException as e:  # noqa: BLE001
            raise WorkerError("call_error", f"solution(...) raised {type(e).__name__} in {what}: "
                              f"{e}\n{candidate_traceback(e)}") from e
        if not c.get("null"):
            self.check_multicast_off(f"after {what}")
            for i, out in enumerate(outputs):
                self.check_plain(out, f"{what}, call {i}")
            self.block_outputs = outputs
            self.block_what = what
        return {"ok": True, "ms": ms, "enqueue_ms": enqueue_ms, "span_ms": span_ms,
                "threads": timing.active_threads()}

    def cmd_commit(self, c):
        """Commits to every output of the last block, before the judge names the call it checks: they
        must exist by now (the judge times this answer too, from the block's answer on, and compares
        the record of a checked call with what was committed)."""
        del c
        what = self.block_what
        try:
            commit = _commits_of([_commitment(out) for out in self.block_outputs])
        except BaseException as e:  # noqa: BLE001
            raise WorkerError("call_error", f"the value returned by solution(...) in {what} "
                              f"cannot be recorded: {type(e).__name__}: {e}") from e
        return {"ok": True, "commit": commit}

    def graph_calls(self):
        """CUDA-graph replays of one captured call: each call copies its own inputs into the
        captured buffers first (before its start event)."""
        if self.graph is None:
            static = tensors_of(self.block_inputs[0])
            replay, out = timing.graphed(self.fn, static, self.device)
            self.graph = (static, replay, out)
        static, replay, out = self.graph

        def load(args):
            for dst, src in zip(static, args):
                if isinstance(dst, _Tensor):
                    dst.copy_(src)

        calls = []
        for a in self.block_inputs:
            def run(a=a):
                load(a)
                replay()
                return out
            calls.append(run)
        return calls

    def cmd_record_call(self, c):
        j = int(c["call"])
        what = "a checked timing call"
        out = self.block_outputs[j]
        reply = {"ok": True}
        if self.side == "reference":
            # The inputs before the call, rebuilt from the call's seed (the generator is deterministic).
            draw = self.block_draws[j]
            before = self.snapshot(self.inputs(draw))
            trees, reply["mutated"] = self.reference_record(draw, self.block_inputs[j], out, before)
        else:
            trees = problem_api.candidate_record(self.problem, self.block_inputs[j], out)
        self.write(c["file"], trees, what)
        return reply

    def cmd_shutdown(self, c):
        del c
        self.phase("shutdown")
        _barrier()
        return {"ok": True, "phases": self.phases}


def serve(r, ch):
    handlers = {"trial": r.cmd_trial, "prepare": r.cmd_prepare, "block": r.cmd_block,
                "record_call": r.cmd_record_call, "shutdown": r.cmd_shutdown}
    while True:
        c = ch.receive()
        handler = handlers.get(c.get("cmd"))
        if handler is None:
            raise WorkerError("harness_error", f"unknown command from the judge: {c!r}")
        reply = handler(c)
        reply["id"] = c.get("id")
        ch.send(reply)
        if c["cmd"] == "block" and c.get("commit"):
            # The block's commitment follows its answer without another round trip: the judge's
            # clock of the commit starts when the block's answer arrives.
            reply = r.cmd_commit(c)
            reply["id"] = c.get("id")
            ch.send(reply)
        if c["cmd"] == "shutdown":
            return


def main():
    # Started ahead of need: the rank imports torch and the worker, connects, and waits for the
    # evaluation its process set is given (its plan); nothing of a problem or candidate is read before.
    store = rendezvous_store()
    ch = Channel(os.environ["PK_JUDGE_SOCKET"])
    ch.send({"hello": int(os.environ["RANK"])})
    go = ch.receive()
    if go.get("cmd") != "go":
        os._exit(EXIT_FAILED)
    with open(go["plan"]) as f:
        plan = json.load(f)
    if plan.get("torch_extensions_dir"):
        # JIT builds (torch load_inline, Triton) go where the judge scans them for multicast after
        # the run.
        jit = os.path.abspath(os.path.join(plan["torch_extensions_dir"], f"rank{os.environ['RANK']}"))
        os.environ["TORCH_EXTENSIONS_DIR"] = jit
        os.environ["TRITON_CACHE_DIR"] = os.path.join(jit, "triton")
    # kr_torch (kernels_runtime's binding), offered by the judge on CUDA: its sources and prebuilt
    # extension, importable before the candidate is.
    for path in reversed(plan.get("python_path") or []):
        sys.path.insert(0, os.path.abspath(path))
    os.environ.update(plan.get("env") or {})
    r = Rank(plan, store)
    code = 0
    try:
        r.start()
        ch.send({"ready": True, "rank": r.rank, "phases": r.phases,
                 "threads_before": r.threads_before, "threads": timing.active_threads(),
                 "hold": getattr(r.clock, "hold_kind", "")})
        serve(r, ch)
    except WorkerError as e:
        code = EXIT_FAILED
        error = {"kind": e.kind, "phase": r.phase_name, "message": str(e)}
    except EOFError:
        code = EXIT_FAILED
        error = None
    except BaseException as e:  # noqa: BLE001 - the worker's own bugs still get reported
        code = EXIT_FAILED
        error = {"kind": "harness_error", "phase": r.phase_name,
                 "message": f"{type(e).__name__}: {e}\n{traceback.format_exc()}"}
    if code and error:
        try:
            ch.send({"error": error})
        except OSError:
            pass
    sys.stdout.flush()
    sys.stderr.flush()
    if code == 0 and dist.is_initialized():
        dist.destroy_process_group()
    # After a failure other ranks may sit in a collective: leave without tearing NCCL down.
    os._exit(code)


if __name__ == "__main__":
    main()
