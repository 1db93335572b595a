#!/usr/bin/env bash
# Benchmark (not a test): 64 concurrent agent episodes in one pkagent process, the model a fake
# provider on loopback answering each call after 2 s, the evaluator on CPU (gloo). Reports peak
# RSS of pkagent (and per episode) and checks that no transcript or result was lost.
#
#   agent/run/pkb_tool/concurrency_bench.sh [BUILD_DIR] [EPISODES]
#
# Each episode makes 3 model calls (copy the reference in place, each call identical so the
# fake provider's shared queue may serve them in any order) and then hits its step limit; its
# solution.py is then scored (1 trial, no timing) like any ended episode.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
build="${1:-$root/build}"
episodes="${2:-64}"
python="${PKAGENT_PYTHON:-$HOME/.cache/pkagent/venv/bin/python}"
[[ -x "$python" ]] || python=python3
work="$(mktemp -d /tmp/pkagent-concurrency-XXXXXX)"
trap 'kill "$fake_pid" 2>/dev/null || true' EXIT

calls=$((episodes * 3 + 8))
cat > "$work/script.json" <<JSON
{"replies": [{"text": "", "delay_s": 2, "count": $calls, "usage": {"input": 1500, "output": 80},
  "tool_calls": [{"name": "bash", "arguments": {"command": "cp reference.py solution.py && wc -l solution.py"}}]}]}
JSON
"$python" "$root/tests/fake_provider/fake_provider.py" --script "$work/script.json" > "$work/fake.out" &
fake_pid=$!
for _ in $(seq 50); do grep -q PORT "$work/fake.out" 2>/dev/null && break; sleep 0.1; done
port="$(awk '/PORT/ {print $2}' "$work/fake.out")"

samples=$(( (episodes + 3) / 4 ))
start=$(date +%s.%N)
/usr/bin/time -v "$build/bin/pkagent" run --mode agent --model "openai-compatible:http://127.0.0.1:$port/v1#fake" \
  --problems 1-4 --samples "$samples" --jobs "$episodes" --device cpu --trials 1 --no-perf \
  --set limits.steps=3 --out "$work/run" -q 2> "$work/time.txt" > "$work/run.txt" || true
end=$(date +%s.%N)

n=$((samples * 4))
rss_kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
finished=$(for t in "$work"/run/episodes/*/sample-*/transcript.jsonl; do tail -n1 "$t"; done | grep -c '"type":"outcome"' || true)
results=$(wc -l < "$work/run/results.jsonl")
echo "episodes:            $n (all $episodes-way concurrent at most)"
echo "wall:                $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}') s"
echo "peak RSS of pkagent: $((rss_kib / 1024)) MiB ($((rss_kib / n)) KiB per episode)"
echo "finished transcripts $finished / $n, results lines $results / $n"
cat "$work/run.txt"
[[ "$finished" == "$n" && "$results" == "$n" ]] || { echo "LOST EPISODES: see $work"; exit 1; }
rm -rf "$work"
