#!/usr/bin/env bash
# The per-problem checks of a port on a GPU host, in one call: for each problem id, its reference as its
# own candidate with timing (self-vs-self per trial), the discrimination check, and with a
# ParallelKernelBench checkout both directions of upstream mode (PKB's reference on PKB's inputs, ours on
# PKB's inputs) and the agreement of PKB's reference with ours on our inputs. Ends with one row per
# problem.
#   usage: bench/problems/check_on_gpus.sh IDS [OUT_DIR]     e.g. 25,47,59-61
#   env:   PKAGENT (default build/bin/pkagent), WORLD (2), DEVICE (cuda), TRIALS (3), PKB (a checkout;
#          unset: the upstream steps are skipped, and the table says so), PYTHON (python3)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
[[ $# -ge 1 ]] || { sed -n '2,9p' "${BASH_SOURCE[0]}" >&2; exit 2; }
ids_arg=$1
out=${2:-/tmp/pkagent-port-check}
B=${PKAGENT:-$root/build/bin/pkagent}
world=${WORLD:-2}
device=${DEVICE:-cuda}
trials=${TRIALS:-3}
py=${PYTHON:-python3}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

# The ids, ranges expanded; each resolved to its directory.
ids=()
IFS=, read -ra parts <<<"$ids_arg"
for part in "${parts[@]}"; do
  if [[ $part =~ ^([0-9]+)-([0-9]+)$ ]]; then
    for ((i = BASH_REMATCH[1]; i <= BASH_REMATCH[2]; ++i)); do ids+=("$i"); done
  elif [[ $part =~ ^[0-9]+$ ]]; then
    ids+=("$part")
  else
    echo "check_on_gpus: '$part' is not a problem id or a range (e.g. 25,47,59-61)" >&2
    exit 2
  fi
done

eval_json() {  # NAME ARGS...: one evaluation's JSON report in $out/NAME.json
  local name=$1; shift
  "$B" eval -q --json --world "$world" --device "$device" "$@" >"$out/$name.json" 2>"$out/$name.err"
  echo "$name: exit $?"
}

for id in "${ids[@]}"; do
  dir=$(ls -d "$root"/bench/problems/"${id}"_*/ 2>/dev/null | head -1)
  [[ -n $dir ]] || { echo "check_on_gpus: no problem $id in bench/problems" >&2; continue; }
  name=$(basename "$dir")
  eval_json "self_$name" --problem "$id" --solution "$dir/reference.py" --trials "$trials"
  if [[ -n ${PKB:-} ]]; then
    pkb_ref=$(ls "$PKB"/reference/"${id}"_*.py 2>/dev/null | head -1)
    eval_json "pkb_on_pkb_$name" --suite-dir "$PKB" --problem "$id" --solution "$pkb_ref" --no-perf --trials 2
    eval_json "ours_on_pkb_$name" --suite-dir "$PKB" --problem "$id" --solution "$dir/reference.py" --no-perf --trials 2
  fi
done

joined=$(IFS=,; echo "${ids[*]}")
"$B" problems --check "$joined" --device "$device" --world "$world" >"$out/check.txt" 2>&1
echo "problems --check: exit $?"
if [[ -n ${PKB:-} ]]; then
  "$py" "$root/tests/bench/problems/upstream_agreement.py" "$PKB" --world "$world" --device "$device" \
    --problems "$joined" --trials 2 >"$out/agreement.txt" 2>&1
  echo "upstream agreement: exit $?"
fi

"$py" - "$out" "${PKB:+yes}" <<'PY'
import glob, json, os, sys
out, with_pkb = sys.argv[1], sys.argv[2] == "yes"

def report(name):
    try:
        r = json.load(open(os.path.join(out, name + ".json")))
        return r[0] if isinstance(r, list) else r
    except (OSError, ValueError):
        return None

def verdict(name):
    r = report(name)
    return r["verdict"] if r else "no report (" + name + ".err)"

print(f"{'problem':44} {'self verdict':12} {'self-vs-self':>14} {'ref ms':>10} {'bound ms':>10}  upstream: pkb on pkb / ours on pkb")
for f in sorted(glob.glob(os.path.join(out, "self_*.json")), key=lambda f: int(os.path.basename(f)[5:].split("_")[0])):
    name = os.path.basename(f)[5:-5]
    r = report("self_" + name)
    if not r:
        print(f"{name:44} {'no report':12}")
        continue
    sp = [t["speedup"] for t in r["trials"] if t.get("speedup")]
    spread = f"{min(sp):.3f}-{max(sp):.3f}" if sp else "-"
    ref = (r.get("reference") or {}).get("median_ms")
    bound = r.get("roofline_ms")
    up = f"{verdict('pkb_on_pkb_' + name)} / {verdict('ours_on_pkb_' + name)}" if with_pkb else "skipped (PKB unset)"
    print(f"{name:44} {r['verdict']:12} {spread:>14} {ref if ref is None else round(ref, 4):>10} "
          f"{bound if bound is None else round(bound, 4):>10}  {up}")
PY
echo "discrimination: $out/check.txt${PKB:+; agreement: $out/agreement.txt}"
