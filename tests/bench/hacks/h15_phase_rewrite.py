"""Family 15, judge tampering: the phase file rewritten so the per-phase timeout never fires.

What it does: at its first call it starts a thread that rewrites the rank's phase file
(out/rank<r>/phase) every 0.2 s, alternating between two phase names, and then never returns (it
sleeps). The supervisor restarts its per-phase clock at every change of phase, so no phase ever
overstays.
Why a naive judge is fooled: it believes what the rank says about its own progress; only the
sandbox's overall wall-clock limit ends the run, which the judge reports as its own internal error
(exit 3) after many minutes instead of a timeout verdict.
Verdict it must get: a failure verdict (`timeout` or refused tampering), exit code 1, within the
phase timeout (a phase can only move forward).
"""
import os
import threading
import time

_started = []


def _rewrite():
    path = os.path.join("out", f"rank{os.environ['RANK']}", "phase")
    n = 0
    while True:
        n += 1
        with open(path + ".tmp2", "w") as f:
            f.write("trial 0" if n % 2 else "init")
        os.replace(path + ".tmp2", path)
        time.sleep(0.2)


def solution(local_hidden_states, local_weight, variance_epsilon):
    if not _started:
        _started.append(threading.Thread(target=_rewrite, daemon=True))
        _started[0].start()
    while True:
        time.sleep(1)
