"""Family 6 (and 10), background worker: short-lived children that run only between the candidate's turns.

What it does: computes honestly, and from every call but the first makes sure that a few helper
processes are alive (posix_spawn of a small program, a C one built at import where a compiler is
found, Python otherwise). A helper waits until its rank is stopped (`/proc/<rank>/stat` says `T`):
that is when the judge runs the reference. Then it spins on a core for as long as the rank stays
stopped (at most 30 ms) and exits. The helpers never run while the candidate's own calls do, and
they are gone shortly after each turn (reaped at once: the rank ignores SIGCHLD), so a census of
processes after the trial finds none. On GPUs the same helper would launch spinning kernels from
its own context: time slices taken from the reference.
Why a naive judge is fooled: it stops the rank processes between their commands, not what they
started, so the reference is timed on a machine the candidate is loading; and it counts processes
only at the end of a trial.
Verdict it must get: not `correct`, or `correct` without an inflated speedup (everything in the
candidate's sandbox is stopped between its turns, children included, and a child alive at a
census is background work).
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import torch.distributed as dist

_HELPERS = 3      # per rank: with the rank's own process they outnumber a 2-core host's cores
_BURN_MS = 30.0
_WAIT_S = 2.0     # a helper that never sees its rank stopped leaves

_C_HELPER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static int stopped(const char* path) {
  char buf[512]; FILE* f = fopen(path, "r"); if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f); fclose(f); buf[n] = 0;
  char* close = strrchr(buf, ')'); return close && close[2] == 'T';
}
int main(int argc, char** argv) {
  char path[64]; snprintf(path, sizeof path, "/proc/%s/stat", argv[1]);
  double burn = atof(argv[2]) / 1e3, wait = atof(argv[3]), t0 = now();
  while (!stopped(path)) { if (now() - t0 > wait) return 0; usleep(1000); }
  volatile unsigned long x = 0; double t1 = now();
  while (stopped(path) && now() - t1 < burn) for (int i = 0; i < 10000; ++i) x += i;
  return 0;
}
"""

_PY_HELPER = r"""
import sys, time
path, burn, wait = f"/proc/{sys.argv[1]}/stat", float(sys.argv[2]) / 1e3, float(sys.argv[3])
def stopped():
    try:
        with open(path) as f:
            return f.read().rpartition(")")[2].split()[0] == "T"
    except OSError:
        return False
t0 = time.monotonic()
while not stopped():
    if time.monotonic() - t0 > wait:
        sys.exit(0)
    time.sleep(0.001)
t1 = time.monotonic()
while stopped() and time.monotonic() - t1 < burn:
    sum(range(1000))
"""


def _helper_argv():
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc:
        d = tempfile.mkdtemp()
        src, exe = os.path.join(d, "h.c"), os.path.join(d, "h")
        with open(src, "w") as f:
            f.write(_C_HELPER)
        if subprocess.run([cc, "-O2", "-o", exe, src], capture_output=True).returncode == 0:
            return [exe]
    return [sys.executable, "-c", _PY_HELPER]


_argv = _helper_argv()
# Helpers that have exited are reaped by the kernel at once: no zombie for a census to count.
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
_alive = []
_calls = []


def _running(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def _keep_helpers():
    global _alive
    _alive = [pid for pid in _alive if _running(pid)]
    me = str(os.getpid())
    while len(_alive) < _HELPERS:
        _alive.append(os.posix_spawn(_argv[0], _argv + [me, str(_BURN_MS), str(_WAIT_S)], dict(os.environ)))


def solution(tensor):
    # Not from the first call: a trial's single call is followed at once by a count of processes.
    _calls.append(1)
    if len(_calls) > 1:
        _keep_helpers()
    out = tensor.clone()
    dist.all_reduce(out)
    return out
