#!/usr/bin/env python3
"""scan_multicast: refuse candidate code that could use NVLink multicast (NVLS).

Multicast is forbidden on our shared GPU hosts (it can take the GPUs out of service). This tool looks
for it in every file it is given (directories are walked):

- source and text files (.py .cu .cuh .cpp .h .ptx ...): PTX `multimem.` instructions, the driver's
  `cuMulticast*` calls, PyTorch symmetric memory's multicast entry points (`multicast_ptr`,
  `multimem_*` ops), and attempts to switch NCCL's or NVSHMEM's NVLS back on;
- binaries (.so .o .cubin .fatbin, executables): the same names among their bytes (embedded PTX,
  symbol and string tables), then, where a `cuobjdump` is found, their disassembled PTX and SASS
  (`LDGMC`: a multimem load-reduce).

Limitation: multimem.st / multimem.red assemble to ordinary STG / REDG in SASS (the address makes
them multicast), so a binary built for sm_90a alone without its PTX shows nothing of them; the
multicast address itself can only come from cuMulticast* (or a library that calls it), which is what
the name scan catches, and the candidate's sources are scanned as text. Scan sources and binaries.

Usage: scan_multicast.py PATH... [--json]   exit 0: clean, 1: multicast found, 2: bad usage.
As a library: `from scan_multicast import scan; findings = scan(paths)`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

# What multicast looks like in text: PTX, the driver API, torch symmetric memory, NVLS switches.
TEXT_PATTERNS = [
    ("PTX multimem instruction", re.compile(rb"\bmultimem\.[a-z_]+")),
    ("CUDA driver multicast API", re.compile(rb"\bcuMulticast[A-Za-z]*")),
    ("CUDA multicast handle type or attribute", re.compile(rb"\bCU_(?:MEM_HANDLE_TYPE_FABRIC_MULTICAST|DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED|MULTICAST_[A-Z_]+)")),
    ("PyTorch symmetric-memory multicast", re.compile(rb"\bmulticast_ptr\b|\bget_multicast_ptr\b|\bmultimem_[a-z_]+")),
    ("NVLS switched on", re.compile(rb"\b(?:NCCL_NVLS_ENABLE|NVSHMEM_DISABLE_NVLS|TORCH_SYMM_MEM_DISABLE_MULTICAST)\b\W{0,6}[\"']?\s*[=:,]\s*[\"']?(?:1|0|true|false)")),
]
# The NVLS switches are fine when they keep multicast off.
NVLS_OFF = re.compile(rb"NCCL_NVLS_ENABLE\W{0,6}[\"']?\s*[=:,]\s*[\"']?0|NVSHMEM_DISABLE_NVLS\W{0,6}[\"']?\s*[=:,]\s*[\"']?1"
                      rb"|TORCH_SYMM_MEM_DISABLE_MULTICAST\W{0,6}[\"']?\s*[=:,]\s*[\"']?1")
SASS_PATTERN = re.compile(r"\b[A-Z]*GMC\b[.A-Z0-9_]*")  # LDGMC.E.ADD...: multimem.ld_reduce

TEXT_SUFFIXES = {".py", ".cu", ".cuh", ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".ptx", ".txt", ".sh",
                 ".toml", ".json", ".cfg", ".ini", ".yaml", ".yml", ".md"}
BINARY_MAGIC = (b"\x7fELF", b"\x50\xed\x55\xba")  # ELF, fatbin


@dataclass
class Finding:
    path: str
    what: str
    match: str
    where: str  # "text", "bytes", "ptx", "sass"

    def __str__(self) -> str:
        return f"{self.path}: {self.what} ({self.where}): {self.match}"


def find_cuobjdump() -> str | None:
    """cuobjdump from PATH, CUDA_HOME, /usr/local/cuda, or the copy Triton ships."""
    candidates = [shutil.which("cuobjdump")]
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            candidates.append(str(Path(root) / "bin" / "cuobjdump"))
    try:
        import importlib.util

        spec = importlib.util.find_spec("triton")
        if spec and spec.origin:
            candidates.append(str(Path(spec.origin).parent / "backends" / "nvidia" / "bin" / "cuobjdump"))
    except (ImportError, ValueError):
        pass
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def _scan_bytes(path: str, data: bytes, where: str) -> list[Finding]:
    out = []
    for what, pattern in TEXT_PATTERNS:
        for m in pattern.finditer(data):
            if what == "NVLS switched on" and NVLS_OFF.match(data, m.start()):
                continue
            out.append(Finding(path, what, m.group(0).decode("latin-1")[:80], where))
            break  # one finding per kind and file is enough
    return out


def _scan_disassembly(path: str, cuobjdump: str) -> list[Finding]:
    out = []
    for flag, where in (("-ptx", "ptx"), ("-sass", "sass")):
        try:
            proc = subprocess.run([cuobjdump, flag, path], capture_output=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if proc.returncode != 0:
            continue  # not a CUDA binary, or no such section
        if where == "ptx":
            out += _scan_bytes(path, proc.stdout, "ptx")
        else:
            m = SASS_PATTERN.search(proc.stdout.decode("latin-1"))
            if m:
                out.append(Finding(path, "SASS multicast instruction", m.group(0), "sass"))
    return out


def _is_binary(data: bytes) -> bool:
    return data.startswith(BINARY_MAGIC) or b"\0" in data[:4096]


def scan(paths, cuobjdump: str | None = "auto") -> list[Finding]:
    """Findings for every file under `paths` (files or directories). cuobjdump: a path, None to
    skip disassembly, or "auto" to look for one."""
    tool = find_cuobjdump() if cuobjdump == "auto" else cuobjdump
    findings: list[Finding] = []
    files: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise FileNotFoundError(f"scan_multicast: {p} does not exist")
        files += sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]
    for f in files:
        data = f.read_bytes()
        binary = _is_binary(data)
        if not binary and f.suffix not in TEXT_SUFFIXES and f.suffix != "":
            continue
        findings += _scan_bytes(str(f), data, "bytes" if binary else "text")
        if binary and tool and data.startswith(BINARY_MAGIC):
            findings += [x for x in _scan_disassembly(str(f), tool)
                         if not any(y.what == x.what and y.path == x.path for y in findings)]
    return findings


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Refuse code that could use NVLink multicast (NVLS).")
    ap.add_argument("paths", nargs="+", help="files or directories (sources, .so, .o, .cubin, executables)")
    ap.add_argument("--json", action="store_true", help="print the findings as JSON")
    ap.add_argument("--no-disassembly", action="store_true", help="do not run cuobjdump")
    a = ap.parse_args(argv)
    try:
        findings = scan(a.paths, None if a.no_disassembly else "auto")
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps([asdict(f) for f in findings], indent=2))
    elif findings:
        print("NVLink multicast (NVLS) is not allowed on this machine; found:", file=sys.stderr)
        for f in findings:
            print(f"  {f}", file=sys.stderr)
        print("Move data with peer loads/stores, TMA or the copy engine instead (docs/kernels_runtime.md).",
              file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
