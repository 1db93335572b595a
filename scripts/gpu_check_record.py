#!/usr/bin/env python3
"""scripts/gpu-check's summary: reads what its parts left in OUT (parts.tsv, ctest-gpu.xml, the
references' runs, the episode's transcript) and writes OUT/gpu-check.json and OUT/gpu-status.md, the page that
docs/gpu-status.md holds. Only the standard library: it runs with any python3 on a GPU host."""
from __future__ import annotations

import argparse
import datetime
import json
import re
import socket
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

NEEDS = re.compile(r"needs (\d+)(?: NVIDIA)? GPUs?")


def nvidia_smi() -> dict:
    def ask(*args: str) -> str:
        try:
            return subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=60).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""

    rows = [r.split(", ") for r in ask("--query-gpu=name,driver_version,memory.total", "--format=csv,noheader").splitlines()]
    return {
        "gpus": len(rows),
        "model": rows[0][0] if rows else "none",
        "driver": rows[0][1] if rows else "none",
        "memory": rows[0][2] if rows else "",
        "topology": ask("topo", "-m"),
    }


def skip_reason(case: ET.Element) -> str:
    """The GTEST_SKIP message gtest printed after 'Skipped', else ctest's own words."""
    text = (case.findtext("system-out") or "").splitlines()
    for i, line in enumerate(text):
        if line.rstrip().endswith("Skipped") and i + 1 < len(text) and text[i + 1].strip():
            return text[i + 1].strip()
        if "[  SKIPPED ]" in line or "SKIP" in line and "reason" in line.lower():
            return line.strip()
    skipped = case.find("skipped")
    return (skipped.get("message") if skipped is not None else "") or "skipped (no reason printed)"


def read_ctest(out: Path) -> dict | None:
    """Every call's JUnit file (ctest-gpu-01.xml, -02, ...) in order; a later result of a test wins."""
    files = sorted(out.glob("ctest-gpu*.xml"))
    if not files:
        return None
    latest = {}
    for xml in files:
        for c in ET.parse(xml).getroot().iter("testcase"):
            latest[c.get("name")] = c
    # Tests of the label that no call reached (a --ctest-limit stop, or not selected) count as not run.
    label = out / "ctest-gpu-label.txt"
    unreached = [n for n in re.findall(r"Test\s+#\d+: (\S+)", label.read_text())
                 if n not in latest] if label.exists() else []
    tests = []
    for c in latest.values():
        status = c.get("status", "")
        failed = c.find("failure") is not None or status == "fail"
        skipped = not failed and (c.find("skipped") is not None or status in ("notrun", "disabled"))
        entry = {"name": c.get("name"), "seconds": float(c.get("time") or 0),
                 "result": "failed" if failed else "skipped" if skipped else "passed"}
        if skipped:
            entry["why"] = skip_reason(c)
            m = NEEDS.search(entry["why"])
            if m:
                entry["needs_gpus"] = int(m.group(1))
        if failed:
            out = (c.findtext("system-out") or "").strip().splitlines()
            entry["tail"] = out[-15:]
        tests.append(entry)
    tests += [{"name": n, "seconds": 0.0, "result": "not reached"} for n in unreached]
    count = {r: sum(t["result"] == r for t in tests) for r in ("passed", "failed", "skipped", "not reached")}
    total = len(tests)
    ran = count["passed"] + count["failed"]
    return {"total": total, **{k.replace(" ", "_"): v for k, v in count.items()}, "ran": ran,
            "ran_percent": round(100.0 * ran / total, 1) if total else 0.0, "tests": tests}


def read_episode(out: Path) -> dict | None:
    transcripts = sorted((out / "episode").rglob("transcript.jsonl")) if (out / "episode").exists() else []
    if not transcripts:
        return None
    commands: dict[int, str] = {}
    steps = []
    outcome = {}
    evaluation: dict = {}
    for line in transcripts[0].read_text().splitlines():
        e = json.loads(line)
        kind = e.get("type")
        if kind == "response" and isinstance(e.get("action"), dict):
            commands[e.get("step", -1)] = e["action"].get("command", "") or e["action"].get("kind", "")
        elif kind == "observation":
            # "text" is the observation as the model read it; older transcripts hold only the streams.
            text = e.get("text") or (e.get("stdout") or {}).get("text", "") + (e.get("stderr") or {}).get("text", "")
            if not text.strip():
                continue
            steps.append({"step": e.get("step"), "command": commands.get(e.get("step"), ""),
                          "exit_code": e.get("exit_code"), "seconds": e.get("wall_seconds"), "output": text})
        elif kind == "evaluation":
            evaluation = {k: e.get(k) for k in ("passed", "score", "details")}
        elif kind == "outcome":
            outcome = {k: v for k, v in e.items() if k not in ("type",)}
    result_file = transcripts[0].parent / "result.json"
    result = json.loads(result_file.read_text()) if result_file.exists() else {}
    final = {k: result.get(k) for k in ("verdict", "speedup", "end_reason", "wall_seconds", "timing", "problem")}
    return {"transcript": str(transcripts[0].relative_to(out)), "steps": steps, "evaluation": evaluation,
            "outcome": outcome, "final": final}


def read_references(out: Path) -> list[dict]:
    """Per world size, each reference judged as its own candidate: its verdict and speedup, and the
    speedup of every trial with the judge's timing flags (self against self should read 1.00)."""
    worlds = []
    for run in sorted((d for d in out.glob("references-w*") if d.is_dir()), key=lambda d: int(d.name.removeprefix("references-w") or 0)):
        rows = []
        results = run / "results.jsonl"
        for line in (results.read_text().splitlines() if results.exists() else []):
            r = json.loads(line)
            stem = f"{r['problem']['id']}_{r['problem']['stem']}"
            final = run / "episodes" / stem / f"sample-{r.get('sample', 0)}" / "final_eval.json"
            ev = json.loads(final.read_text()) if final.exists() else {}
            trials = [t["speedup"] for t in ev.get("trials", []) if isinstance(t.get("speedup"), (int, float))]
            rows.append({"problem": stem, "verdict": r.get("verdict"), "speedup": r.get("speedup"),
                         "noise": r.get("noise"), "trials": trials, "flags": len(ev.get("timing_flags") or []),
                         "wall_seconds": ev.get("wall_seconds")})
        trials = [t for row in rows for t in row["trials"]]
        undefined = run.with_name(run.name + ".undefined")
        not_defined = [dict(zip(("problem", "needs_gpus"), l.split("\t"))) for l in
                       (undefined.read_text().splitlines() if undefined.exists() else []) if l.strip()]
        worlds.append({"world": int(run.name.removeprefix("references-w")), "problems": len(rows),
                       "not_defined": not_defined,
                       "correct": sum(row["verdict"] == "correct" for row in rows),
                       "trials": len(trials), "trials_in_2_percent": sum(0.98 <= t <= 1.02 for t in trials),
                       "trial_min": min(trials, default=None), "trial_max": max(trials, default=None),
                       "flagged": sum(row["flags"] > 0 for row in rows), "rows": rows})
    return worlds


def parts_table(out: Path, asked: list[str]) -> dict:
    done = {}
    tsv = out / "parts.tsv"
    if tsv.exists():
        # A part run over several calls (ctest with --ctest-add) has a row per call: its seconds
        # add up and the last call's result stands, as its tests' results do over earlier ones.
        for row in tsv.read_text().splitlines():
            name, result, seconds = row.split("\t")
            if name in done:
                seconds = done[name]["seconds"] + float(seconds)
            done[name] = {"result": result, "seconds": float(seconds)}
    return {p: done.get(p, {"result": "not run" if p not in asked else "not reached", "seconds": 0.0})
            for p in ("build", "ctest", "references", "episode")}


def fenced(text: str, lines: int = 60) -> str:
    body = text.rstrip().splitlines()
    cut = len(body) - lines
    body = body[:lines] + ([f"... ({cut} more lines in the episode's transcript)"] if cut > 0 else [])
    return "```\n" + "\n".join(body).replace("```", "'''") + "\n```\n"


def markdown(r: dict) -> str:
    h = r["host"]
    md = [f"# Last proven on a GPU\n",
          f"Written by `scripts/gpu-check` on {r['date']} at commit `{r['commit']}`: host `{h['name']}`, "
          f"{h['gpus']} x {h['model']} ({h['memory']}), driver {h['driver']}. Every figure below is from that run.\n",
          "| part | result | seconds |", "|---|---|---|"]
    md += [f"| {p} | {v['result']} | {v['seconds']:.0f} |" for p, v in r["parts"].items()]
    c = r.get("ctest")
    if c:
        md += ["", "## `ctest -L gpu`", "",
               f"{c['total']} tests: **{c['ran']} ran ({c['ran_percent']}%)**, {c['passed']} passed, "
               f"{c['failed']} failed, {c['skipped']} skipped, {c['not_reached']} not reached.", ""]
        failed = [t for t in c["tests"] if t["result"] == "failed"]
        if failed:
            md += ["Failed:", ""] + [f"- `{t['name']}` ({t['seconds']:.0f} s)" for t in failed] + [""]
        ran = [t for t in c["tests"] if t["result"] == "passed"]
        md += ["<details><summary>Passed</summary>", ""] + \
              [f"- `{t['name']}` ({t['seconds']:.1f} s)" for t in ran] + ["", "</details>", ""]
        unreached = [t for t in c["tests"] if t["result"] == "not reached"]
        if unreached:
            md += ["Not reached (no call of the check started them):", ""] + [f"- `{t['name']}`" for t in unreached] + [""]
        other = [t for t in c["tests"] if t["result"] == "skipped" and "needs_gpus" not in t]
        if other:
            md += ["Skipped for another reason:", ""] + [f"- `{t['name']}`: {t['why']}" for t in other] + [""]
    for w in r.get("references") or []:
        md += ["", f"## Each reference as its own candidate at W={w['world']}, timed", "",
               f"{w['problems']} problems: **{w['correct']} correct**. {w['trials']} trials of self against self: "
               f"{w['trials_in_2_percent']} within [0.98, 1.02], from {w['trial_min'] or 0:.3f} to "
               f"{w['trial_max'] or 0:.3f}; the judge flagged the timing of {w['flagged']} problems "
               "(honest timing is an open issue: these are the figures it starts from).", "",
               "<details><summary>Per problem</summary>", "",
               "| problem | verdict | speedup | trials | flags | seconds |", "|---|---|---|---|---|---|"]
        for row in w["rows"]:
            t = ", ".join(f"{x:.3f}" for x in row["trials"])
            sp = f"{row['speedup']:.3f}" if isinstance(row["speedup"], (int, float)) else "-"
            md += [f"| {row['problem']} | {row['verdict']} | {sp} | {t} | {row['flags']} | "
                   f"{row['wall_seconds'] or 0:.0f} |"]
        md += ["", "</details>", ""]
    e = r.get("episode")
    if e:
        md += ["## One scripted agent episode (check, profile, bench, submit)", ""]
        for s in e["steps"]:
            md += [f"`$ {s['command']}` (exit {s['exit_code']}, {s['seconds'] or 0:.1f} s)", "", fenced(s["output"])]
        f = e["final"]
        if f.get("verdict"):
            t = f.get("timing") or {}
            md += [f"Final scoring: **{f['verdict']}**, speedup {f.get('speedup') or 0:.3f}x (reference "
                   f"{t.get('reference_ms') or 0:.4f} ms, solution {t.get('solution_ms') or 0:.4f} ms, "
                   f"{t.get('trials')} trials); the episode ended: {f.get('end_reason')}, "
                   f"{f.get('wall_seconds') or 0:.0f} s in all.", ""]
    needs = [t for t in (c["tests"] if c else []) if "needs_gpus" in t]
    md += ["## Not run here", ""]
    for w in r.get("references") or []:
        md += [f"- problem {u['problem']}'s reference: not run here: needs {u['needs_gpus']} GPUs (not defined at "
               f"W={w['world']})" for u in w["not_defined"]]
    if needs:
        md += [f"- `{t['name']}`: not run here: needs {t['needs_gpus']} GPUs" for t in needs]
    elif not any(w["not_defined"] for w in r.get("references") or []):
        md += ["- nothing the `gpu` label holds"]
    return "\n".join(md) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--parts", required=True)
    a = ap.parse_args()
    host = nvidia_smi()
    host["name"] = socket.gethostname()
    r = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "commit": a.commit,
         "host": host, "parts": parts_table(a.out, a.parts.split(",")), "ctest": read_ctest(a.out),
         "references": read_references(a.out), "episode": read_episode(a.out)}
    (a.out / "gpu-check.json").write_text(json.dumps(r, indent=1) + "\n")
    (a.out / "gpu-status.md").write_text(markdown(r))


if __name__ == "__main__":
    main()
