"""The figures of bench/warm_start/run.sh from the reports it wrote: python3 summary.py OUT_DIR."""

import json
import statistics
import sys
from pathlib import Path


def reports(path):
    """The reports of one `pkagent eval --json` (an object, or an array with several evaluations); none
    for a step that was not run."""
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        print(f"{path.name}: no report ({e}); see {path.with_suffix('.err')}")
        return []
    return data if isinstance(data, list) else [data]


def walls(rs):
    return [r["wall_seconds"] for r in rs]


def line(name, rs):
    if not rs:
        return
    w = walls(rs)
    verdicts = sorted({r["verdict"] for r in rs})
    print(f"{name:14} n={len(w):3}  median {statistics.median(w):6.2f} s  min {min(w):6.2f}  max {max(w):6.2f}  "
          f"verdicts {','.join(verdicts)}")


def main():
    out = Path(sys.argv[1])
    imports = sorted(float((out / f"import_torch.{i}").read_text().split()[-1]) for i in (1, 2, 3)
                     if (out / f"import_torch.{i}").exists())
    torch_s = statistics.median(imports) if imports else None
    if torch_s:
        print(f"import torch   median {torch_s:.2f} s of {imports}")
    line("check cold", reports(out / "check_cold.json"))
    warm = reports(out / "check_warm.json")[1:]  # the first of the series starts cold
    line("check warm", warm)
    if warm and torch_s:
        print(f"  warm check / import torch = {statistics.median(walls(warm)) / torch_s:.2f}")
    line("bench cold", reports(out / "bench_cold.json"))
    line("bench warm", reports(out / "bench_warm.json")[1:])
    line("final cold", reports(out / "final_cold.json"))
    line("final warm", reports(out / "final_warm.json")[1:])
    samples = out / "leak_samples.tsv"
    if samples.exists():
        rows = [list(map(int, l.split("\t"))) for l in samples.read_text().splitlines() if l.strip()]
        leak = reports(out / "leak.json")
        if rows:
            n = max(1, len(rows) // 10)
            first, last = rows[n:2 * n], rows[-2 * n:-n] or rows[-n:]

            def mean(col, rs):
                return sum(r[col] for r in rs) / len(rs)

            print(f"leak check     {len(leak)} evaluations, {len(rows)} samples; pkagent early -> late: "
                  f"RSS {mean(1, first) / 1024:.1f} -> {mean(1, last) / 1024:.1f} MiB, "
                  f"open files {mean(2, first):.0f} -> {mean(2, last):.0f}, threads {mean(3, first):.0f} -> "
                  f"{mean(3, last):.0f}; ranks' RSS {mean(4, first) / 1024:.0f} -> {mean(4, last) / 1024:.0f} MiB")
        line("leak evals", leak)


if __name__ == "__main__":
    main()
