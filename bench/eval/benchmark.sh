#!/usr/bin/env bash
# Benchmark of `pkagent eval` on a GPU host: the 12 references as candidates, self-vs-self
# timing of problems 1 and 13, a candidate 5% slower on purpose, and the wall time of one evaluation
# of problem 1 (5 trials with timing, reference cache warm). Writes one JSON report per run and a
# summary table.    usage: bench/eval/benchmark.sh [OUT_DIR]   (PKAGENT=path/to/pkagent)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B=${PKAGENT:-$root/build/bin/pkagent}
out=${1:-/tmp/pkagent-eval-bench}
mkdir -p "$out"
export PKAGENT_CACHE=${PKAGENT_CACHE:-$out/cache}
sandbox=${PKAGENT_SANDBOX:-bwrap}
world=${WORLD:-2}

run() {  # NAME ARGS...: one evaluation, its JSON report and its wall time
  local name=$1; shift
  local t0=$(date +%s%N)
  "$B" eval -q --json --sandbox "$sandbox" --world "$world" "$@" >"$out/$name.json" 2>"$out/$name.err"
  local rc=$?
  local ms=$((($(date +%s%N) - t0) / 1000000))
  printf '%-28s rc=%d wall=%d.%03ds\n' "$name" "$rc" $((ms / 1000)) $((ms % 1000))
}

echo "== the references as candidates (correctness, 5 trials; fills the reference cache)"
for dir in "$root"/bench/problems/*/; do
  p=$(basename "$dir")
  run "ref_$p" --problem "$p" --solution "$dir/reference.py" --no-perf
done
echo "== self vs self with timing (5 trials each)"
for p in 1_allreduce 13_gemm_allreduce; do
  run "self_$p" --problem "$p" --solution "$root/bench/problems/$p/reference.py"
done
echo "== a candidate 5% slower on purpose"
run slower_1_allreduce --problem 1 --solution "$root/tests/bench/candidates/gpu_allreduce_5pct_slower.py"
echo "== benchmark: problem 1, 5 trials with timing, cache warm"
run bench_1_allreduce --problem 1 --solution "$root/bench/problems/1_allreduce/reference.py"

python3 - "$out" <<'PY'
import glob, json, os, sys
print(f"{'run':28} {'verdict':14} {'speedup per trial':44} {'ref med':>9} {'cand med':>9} {'wall':>6}")
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    try:
        r = json.load(open(f))
    except Exception as e:
        print(f"{os.path.basename(f):28} unreadable: {e}"); continue
    sp = " ".join(f"{t['speedup']:.3f}" for t in r["trials"] if t.get("speedup"))
    ref = f"{r['reference']['median_ms']*1e3:.1f}us" if r.get("reference") else "-"
    cand = f"{r['candidate']['median_ms']*1e3:.1f}us" if r.get("candidate") else "-"
    print(f"{os.path.basename(f)[:-5]:28} {r['verdict']:14} {sp:44} {ref:>9} {cand:>9} {r['wall_seconds']:5.1f}s")
    if r["verdict"] != "correct":
        print("   ", r["message"][:600].replace("\n", "\n    "))
PY
