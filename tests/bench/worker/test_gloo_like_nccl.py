"""bench/worker/gloo_like_nccl.py on real torch.distributed gloo at world sizes 2 and 4: the shapes NCCL accepts
for gathered outputs and scattered inputs (stacked (W, ...), flat, gloo's own), the pieces of different
lengths and the list all_to_all NCCL takes, NCCL's errors for what NCCL refuses, and the non-root tensors of
reduce left alone. Each world runs once (gloo_cases.py, one process per rank); each case is a test."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gloo_cases  # noqa: E402 - after the path is set

RANK_TIMEOUT_S = 120
WORLDS = (2, 4)


_runs = {}


def run_world(world):
    """Every case at `world` ranks, once per session: [per-rank {case: "ok" | failure}]."""
    if world in _runs:
        if isinstance(_runs[world], str):
            pytest.fail(_runs[world])
        return _runs[world]
    work = Path(tempfile.mkdtemp(prefix=f"pkagent-gloo-like-nccl-w{world}-"))
    env = dict(os.environ, WORLD_SIZE=str(world), GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
    procs = []
    for rank in range(world):
        log = open(work / f"rank{rank}.log", "w")
        procs.append((subprocess.Popen([sys.executable, str(HERE / "gloo_cases.py"), str(work / f"rank{rank}.json"),
                                        str(work / "store")], env=dict(env, RANK=str(rank)), stdout=log,
                                       stderr=subprocess.STDOUT), log))
    deadline = time.monotonic() + RANK_TIMEOUT_S
    while any(p.poll() is None for p, _ in procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    for proc, log in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        log.close()
    failed = [r for r, (p, _) in enumerate(procs) if p.returncode != 0]
    if failed:
        tails = "\n".join(f"--- rank {r} (exit {procs[r][0].returncode}) ---\n"
                          f"{(work / f'rank{r}.log').read_text()[-3000:]}" for r in failed)
        _runs[world] = f"ranks {failed} of world {world} failed or hung past {RANK_TIMEOUT_S} s (logs in {work}):\n{tails}"
        pytest.fail(_runs[world])
    _runs[world] = [json.loads((work / f"rank{r}.json").read_text()) for r in range(world)]
    shutil.rmtree(work)
    return _runs[world]


@pytest.mark.parametrize("world", WORLDS)
@pytest.mark.parametrize("case", [c.__name__ for c in gloo_cases.CASES])
def test_case(case, world):
    results = run_world(world)
    failures = [f"rank {r}: {res.get(case, 'not run')}" for r, res in enumerate(results) if res.get(case) != "ok"]
    assert not failures, "\n".join(failures)
