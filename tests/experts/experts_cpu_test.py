"""CPU checks of the expert solutions (bench/solutions/expert): each imports on a machine without GPUs
(kr_torch from kernels_runtime/python, as `pkagent eval` offers it; nothing is built), defines `solution` with its reference's
signature, and holds no NVLink multicast (`pkagent scan-multicast`, the judge's scanner). The GPU test beside
this one runs them through `pkagent eval`."""

import importlib.util
import inspect
import os
import subprocess
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXPERTS = ROOT / "bench" / "solutions" / "expert"
PROBLEMS = ROOT / "bench" / "problems"
sys.path.insert(0, str(ROOT / "kernels_runtime" / "python"))
IDS = ("1_allreduce", "2_allgather", "3_broadcast", "4_reduce", "5_scatter", "6_gather", "7_reducescatter",
       "8_alltoall", "13_gemm_allreduce", "16_gemm_reducescatter")


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class ExpertFiles(unittest.TestCase):
    def test_every_expert_has_a_problem_and_the_list_is_complete(self):
        on_disk = sorted(p.stem for p in EXPERTS.glob("[0-9]*_*.py"))
        self.assertEqual(on_disk, sorted(IDS))
        for pid in IDS:
            self.assertTrue((PROBLEMS / pid / "reference.py").exists(), pid)

    def test_each_imports_without_gpus_and_matches_the_reference_signature(self):
        for pid in IDS:
            with self.subTest(pid):
                expert = load(EXPERTS / f"{pid}.py", f"expert_{pid}")
                reference = load(PROBLEMS / pid / "reference.py", f"reference_{pid}")
                self.assertEqual(Path(expert.kr_torch.__file__).resolve().parents[2], ROOT / "kernels_runtime")
                self.assertEqual(inspect.signature(expert.solution).parameters.keys(),
                                 inspect.signature(reference.solution).parameters.keys())
                for name, p in inspect.signature(reference.solution).parameters.items():
                    self.assertEqual(inspect.signature(expert.solution).parameters[name].default, p.default, name)

    def test_no_multicast(self):
        pkagent = Path(os.environ["PKAGENT_BIN_DIR"]) / "pkagent"
        r = subprocess.run([str(pkagent), "scan-multicast", str(EXPERTS)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()
