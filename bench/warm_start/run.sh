#!/usr/bin/env bash
# What warm rank sets save (bench/eval/sets/warm_pool.h), and that they leak nothing. Figures on stdout,
# one JSON report per step under OUT_DIR.
#   usage: bench/warm_start/run.sh [OUT_DIR]      (PKAGENT=path/to/pkagent; DEVICE=cpu|cuda; WORLD=2;
#          EVALS=20 evaluations for the start-up figures; LEAK_EVALS=200 for the leak check, 0 skips it;
#          SUITE=a problems directory other than bench/problems; STEPS=import,check,bench,leak by default;
#          PAUSE=8 seconds between warm evaluations, the time an agent takes to read a verdict at least)
# 1. `python -c "import torch"`, three times: the cost a warm set takes off each evaluation.
# 2. A check of problem 1's reference (1 trial, no timing) cold, then EVALS times warm in one pkagent:
#    the wall time of each evaluation, from its report.
# 3. A bench and a final scoring (5 trials with timing, reference cache warm), cold and warm.
# 4. LEAK_EVALS warm checks in one pkagent, sampling its resident memory, open files and threads,
#    and the resident memory of the warm sets waiting.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B=${PKAGENT:-$root/build/bin/pkagent}
out=${1:-/tmp/pkagent-warm-start}
device=${DEVICE:-cpu}
world=${WORLD:-2}
evals=${EVALS:-20}
leak_evals=${LEAK_EVALS:-200}
pause=${PAUSE:-8}
python=${PKAGENT_PYTHON:-$HOME/.cache/pkagent/venv/bin/python}
steps=",${STEPS:-import,check,bench,leak},"
mkdir -p "$out"
export PKAGENT_CACHE=${PKAGENT_CACHE:-$out/cache}
suite=${SUITE:-$root/bench/problems}
ref="$suite/1_allreduce/reference.py"
common=(eval -q --json --suite-dir "$suite" --problem 1 --device "$device" --world "$world" --solution "$ref")

if [[ $steps == *,import,* ]]; then
  echo "== import torch (3 runs)"
  for i in 1 2 3; do
    /usr/bin/time -f "%e" -o "$out/import_torch.$i" "$python" -c "import torch" && cat "$out/import_torch.$i"
  done
fi

if [[ $steps == *,check,* ]]; then
  echo "== check (1 trial, no timing): 1 cold, then $evals warm"
  "$B" "${common[@]}" --trials 1 --no-perf >"$out/check_cold.json" 2>"$out/check_cold.err"
  "$B" "${common[@]}" --trials 1 --no-perf --repeat "$((evals + 1))" --pause "$pause" >"$out/check_warm.json" 2>"$out/check_warm.err"
fi

if [[ $steps == *,bench,* ]]; then
  echo "== bench (1 trial with timing) and final scoring (5 trials with timing): cold, then warm"
  "$B" "${common[@]}" --trials 1 >"$out/bench_cold.json" 2>"$out/bench_cold.err"
  "$B" "${common[@]}" --trials 1 --repeat 4 --pause "$pause" >"$out/bench_warm.json" 2>"$out/bench_warm.err"
  "$B" "${common[@]}" --trials 5 >"$out/final_cold.json" 2>"$out/final_cold.err"
  "$B" "${common[@]}" --trials 5 --repeat 3 --pause "$pause" >"$out/final_warm.json" 2>"$out/final_warm.err"
fi

if [[ $steps == *,leak,* && $leak_evals -gt 0 ]]; then
  echo "== $leak_evals warm checks in one pkagent: memory, files, threads"
  "$B" "${common[@]}" --trials 1 --no-perf --repeat "$leak_evals" >"$out/leak.json" 2>"$out/leak.err" &
  pid=$!
  : >"$out/leak_samples.tsv"
  while kill -0 "$pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null)
    threads=$(awk '/^Threads/ {print $2}' "/proc/$pid/status" 2>/dev/null)
    fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
    # The ranks alive (waiting warm sets and the evaluation running), their resident memory summed.
    sets=$(pgrep -f "rank_worker.py" | xargs -r ps -o rss= -p 2>/dev/null | awk '{s+=$1} END {print s+0}')
    [[ -n $rss ]] && printf '%s\t%s\t%s\t%s\t%s\n' "$(date +%s)" "$rss" "$fds" "$threads" "$sets" >>"$out/leak_samples.tsv"
    sleep 1
  done
  wait "$pid"
fi

"$python" "$root/bench/warm_start/summary.py" "$out"
