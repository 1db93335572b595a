"""Tests of kernels_runtime/tools/scan_multicast.py on real files: sources, and objects compiled by
nvcc when it is present (skipped, with the reason, otherwise)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "kernels_runtime" / "tools" / "scan_multicast.py"
sys.path.insert(0, str(TOOL.parent))
import scan_multicast  # noqa: E402

LOAD_REDUCE = 'asm volatile("multimem.ld_reduce.relaxed.sys.global.add.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");'
KERNEL = "__global__ void k(float* p, float* o) {{ float v = 0; {body} o[threadIdx.x] = v; }}\n"


class ScanMulticastTest(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write(self, name, text):
        p = self.dir / name
        p.write_text(text)
        return p

    def run_tool(self, *args):
        return subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True, text=True)

    def test_multimem_in_a_cuda_string_of_a_python_candidate_is_refused(self):
        p = self.write("cand.py", 'src = r"""\n' + KERNEL.format(body=LOAD_REDUCE) + '"""\n')
        r = self.run_tool(p)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("multimem.ld_reduce", r.stderr)
        self.assertIn("not allowed", r.stderr)

    def test_driver_multicast_calls_and_torch_multicast_are_refused(self):
        self.assertTrue(scan_multicast.scan([self.write("a.cu", "cuMulticastCreate(&h, &prop);")], None))
        self.assertTrue(scan_multicast.scan([self.write("b.py", "ptr = hdl.multicast_ptr\n")], None))
        self.assertTrue(scan_multicast.scan([self.write("c.py", "torch.ops.symm_mem.multimem_all_reduce_(x)\n")], None))

    def test_nvls_switches_count_only_when_they_turn_multicast_on(self):
        on = self.write("on.py", 'os.environ["NCCL_NVLS_ENABLE"] = "1"\n')
        off = self.write("off.py", 'os.environ["NCCL_NVLS_ENABLE"] = "0"\nos.environ["NVSHMEM_DISABLE_NVLS"] = "1"\n')
        self.assertTrue(scan_multicast.scan([on], None))
        self.assertEqual(scan_multicast.scan([off], None), [])

    def test_clean_code_and_kernels_runtime_itself_pass(self):
        clean = self.write("ok.cu", KERNEL.format(body="v = p[threadIdx.x];"))
        r = self.run_tool(clean, ROOT / "kernels_runtime" / "include", "--json")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(json.loads(r.stdout), [])

    def test_missing_path_is_a_usage_error(self):
        r = self.run_tool(self.dir / "nope.cu")
        self.assertEqual(r.returncode, 2)
        self.assertIn("does not exist", r.stderr)

    def test_compiled_objects_are_refused_by_their_ptx_or_sass(self):
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        if not os.access(nvcc, os.X_OK):
            self.skipTest("no nvcc to compile a test object")
        if scan_multicast.find_cuobjdump() is None:
            self.skipTest("no cuobjdump (CUDA bin/ or Triton's) to disassemble with")
        src = self.write("bad.cu", KERNEL.format(body=LOAD_REDUCE))
        good = self.write("good.cu", KERNEL.format(body="v = p[threadIdx.x];"))
        for arch in ("compute_90a,code=sm_90a", "compute_90a,code=compute_90a"):
            for s in (src, good):
                obj = self.dir / f"{s.stem}_{arch.split('=')[-1]}.o"
                subprocess.run([nvcc, f"-gencode=arch={arch}", "-c", str(s), "-o", str(obj)], check=True)
                found = scan_multicast.scan([obj])
                self.assertEqual(bool(found), s is src, f"{obj}: {found}")


if __name__ == "__main__":
    unittest.main()
