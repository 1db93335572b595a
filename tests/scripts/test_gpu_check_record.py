"""scripts/gpu_check_record.py: the summary of a GPU check run over several device calls."""

import os
import sys
from pathlib import Path

sys.path.insert(0, os.environ.get("PKAGENT_SCRIPTS", str(Path(__file__).resolve().parents[2] / "scripts")))
import gpu_check_record as record  # noqa: E402


def junit(path: Path, cases: dict[str, str]) -> None:
    """A ctest JUnit file: test name -> passed, failed or skipped."""
    body = []
    for name, result in cases.items():
        inner = {"failed": '<failure message="Failed"/>', "skipped": '<skipped message="Skipped"/>'}.get(result, "")
        status = {"failed": "fail", "skipped": "notrun"}.get(result, "run")
        # gtest's words for a GTEST_SKIP: the location and "Skipped", then the reason.
        out = ("<system-out>[ RUN      ] x\ntest.cc:12: Skipped\nneeds 2 GPUs; this host has 1\n"
               "[  SKIPPED ] x (0 ms)</system-out>") if result == "skipped" else ""
        body.append(f'<testcase name="{name}" status="{status}" time="1.5">{inner}{out}</testcase>')
    path.write_text('<?xml version="1.0"?><testsuite>' + "".join(body) + "</testsuite>")


def test_a_later_calls_result_of_a_test_wins_and_unreached_tests_count(tmp_path):
    junit(tmp_path / "ctest-gpu-01.xml", {"a.one": "passed", "a.two": "failed", "a.three": "skipped"})
    junit(tmp_path / "ctest-gpu-02.xml", {"a.two": "passed"})
    (tmp_path / "ctest-gpu-label.txt").write_text(
        "Test project /b\n  Test  #1: a.one\n  Test  #2: a.two\n  Test  #3: a.three\n  Test #14: a.four\n")
    c = record.read_ctest(tmp_path)
    results = {t["name"]: t["result"] for t in c["tests"]}
    assert results == {"a.one": "passed", "a.two": "passed", "a.three": "skipped", "a.four": "not reached"}
    assert (c["total"], c["ran"], c["failed"], c["not_reached"]) == (4, 2, 0, 1)
    assert c["ran_percent"] == 50.0
    assert [t.get("needs_gpus") for t in c["tests"] if t["name"] == "a.three"] == [2]


def test_without_the_label_list_only_what_ran_is_counted(tmp_path):
    junit(tmp_path / "ctest-gpu-01.xml", {"a.one": "failed"})
    c = record.read_ctest(tmp_path)
    assert (c["total"], c["failed"], c["not_reached"]) == (1, 1, 0)
    assert record.read_ctest(tmp_path / "absent") is None


def test_a_part_over_several_calls_adds_its_seconds_and_keeps_its_last_result(tmp_path):
    (tmp_path / "parts.tsv").write_text("ctest\tfailed (exit 8)\t399.4\nbuild\tok\t98.0\nctest\tok\t27.2\n")
    parts = record.parts_table(tmp_path, ["build", "ctest"])
    assert parts["ctest"] == {"result": "ok", "seconds": 399.4 + 27.2}
    assert parts["build"] == {"result": "ok", "seconds": 98.0}
    assert parts["references"]["result"] == "not run"
    assert parts["episode"]["result"] == "not run"


def test_the_summary_names_unreached_tests(tmp_path):
    junit(tmp_path / "ctest-gpu-01.xml", {"a.one": "passed"})
    (tmp_path / "ctest-gpu-label.txt").write_text("  Test  #1: a.one\n  Test  #2: a.two\n")
    host = {"name": "h", "gpus": 1, "model": "GPU", "memory": "1 MiB", "driver": "1"}
    md = record.markdown({"date": "d", "commit": "c", "host": host, "parts": record.parts_table(tmp_path, ["ctest"]),
                          "ctest": record.read_ctest(tmp_path), "references": [], "episode": None})
    assert "2 tests: **1 ran (50.0%)**" in md
    assert "Not reached" in md and "`a.two`" in md
