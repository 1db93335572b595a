#!/usr/bin/env bash
# What `pkb check` costs inside an agent episode, against one `import torch` on the same machine.
# The model is the fake provider on loopback, answering every call after DELAY seconds with
# `cp reference.py solution.py && pkb check`; each check's wall time is its observation's. Figures
# on stdout, the run and logs under OUT_DIR.
#   usage: bench/warm_start/episode_check.sh [OUT_DIR]   (PKAGENT=path/to/pkagent; DEVICE=cpu|cuda;
#          WORLD=2; PROBLEM=1; CHECKS=6; DELAY=3 seconds; LOAD=build runs a concurrent build: the
#          compile commands of BUILD_DIR/compile_commands.json (build), two at a time, in a loop;
#          RUN_ARGS: more options of pkagent run, e.g. --cold-ranks for the figures without warm sets)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B=${PKAGENT:-$root/build/bin/pkagent}
out=${1:-/tmp/pkagent-episode-check}
python=${PKAGENT_PYTHON:-$HOME/.cache/pkagent/venv/bin/python}
checks=${CHECKS:-6}
delay=${DELAY:-3}
compile_db=${BUILD_DIR:-$root/build}/compile_commands.json
rm -rf "$out" && mkdir -p "$out"
# A cold reference cache (the first check computes the reference), unless PKAGENT_CACHE names one
# that an earlier run filled: what every episode of a problem after its first meets.
export PKAGENT_CACHE="${PKAGENT_CACHE:-$out/cache}"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null' EXIT

if [[ ${LOAD:-} == build ]]; then
  [[ -f $compile_db ]] || { echo "LOAD=build needs $compile_db (configure with CMake first)" >&2; exit 2; }
  # Each compile command with its object and dependency file sent to /dev/null: a real compiler
  # load, nothing written.
  "$python" -c 'import json, re, sys
for c in json.load(open(sys.argv[1])):
    cmd = re.sub(r" -(o|MF|MT) \S+", lambda m: " -%s /dev/null" % m.group(1) if m.group(1) != "MT" else "", c["command"])
    print("cd %s && %s" % (c["directory"], cmd))' "$compile_db" >"$out/compile.sh"
  for lane in 1 2; do
    (while :; do while read -r line; do bash -c "$line" >/dev/null 2>&1; done <"$out/compile.sh"; done) &
    pids+=($!)
  done
  sleep 5
fi

echo "== import torch (3 runs${LOAD:+, under the load})"
for i in 1 2 3; do /usr/bin/time -f "%e" -o "$out/import_torch.$i" "$python" -c "import torch" && cat "$out/import_torch.$i"; done

cat >"$out/script.json" <<JSON
{"replies": [{"text": "", "delay_s": $delay, "count": $((checks + 2)), "usage": {"input": 1500, "output": 80},
  "tool_calls": [{"name": "bash", "arguments": {"command": "cp reference.py solution.py && pkb check"}}]}]}
JSON
"$python" "$root/tests/fake_provider/fake_provider.py" --script "$out/script.json" >"$out/fake.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do grep -q PORT "$out/fake.out" 2>/dev/null && break; sleep 0.1; done
port="$(awk '/PORT/ {print $2}' "$out/fake.out")"
echo "== $checks checks in one episode, the model answering after $delay s (problem ${PROBLEM:-1}, world ${WORLD:-2}, ${DEVICE:-cpu})"
"$B" run --mode agent --model "openai-compatible:http://127.0.0.1:$port/v1#fake" --problems "${PROBLEM:-1}" \
  --device "${DEVICE:-cpu}" --world "${WORLD:-2}" --set "limits.steps=$checks" --out "$out/run" -q ${RUN_ARGS:-} \
  >"$out/run.txt" 2>&1 || { echo "pkagent run failed: see $out/run.txt"; exit 1; }

"$python" - "$out" <<'PY'
import glob, json, statistics, sys
out = sys.argv[1]
torch = [float(open(f"{out}/import_torch.{i}").read()) for i in (1, 2, 3)]
checks = []
for line in open(glob.glob(f"{out}/run/episodes/*/sample-0/transcript.jsonl")[0]):
    e = json.loads(line)
    if e.get("type") == "observation" and "wall_seconds" in e:
        ok = "verdict: correct" in e.get("stdout", {}).get("text", "")
        checks.append((e["wall_seconds"], ok))
if not checks or not all(ok for _, ok in checks):
    sys.exit(f"not every check read correct: {checks}")
t = statistics.median(torch)
walls = [w for w, _ in checks]
later = walls[1:] or walls
print(f"import torch: median {t:.2f} s ({min(torch):.2f}-{max(torch):.2f})")
print(f"first check: {walls[0]:.2f} s = {walls[0] / t:.2f} of import torch")
print(f"later checks: median {statistics.median(later):.2f} s ({min(later):.2f}-{max(later):.2f}) "
      f"= {statistics.median(later) / t:.2f} of import torch")
PY
