"""A problem's declarations (problem.toml) for the tests: the file itself, its formulas, and the "problem" part
of the worker's plan that pkagent builds from it (bench/eval/worker_plan.cc)."""

import ast
import math
import os
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
PROBLEMS_DIR = Path(os.environ.get("PKAGENT_PROBLEMS_DIR") or ROOT / "bench" / "problems")
WORKER_DIR = ROOT / "bench" / "worker"
if str(WORKER_DIR) not in sys.path:
    sys.path.insert(0, str(WORKER_DIR))

import problem_api  # noqa: E402 - after the path is set


def toml_of(name):
    with open(PROBLEMS_DIR / name / "problem.toml", "rb") as f:
        return tomllib.load(f)


_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b}
_FUNCTIONS = {"min": min, "max": max, "log2": math.log2}


def evaluate_formula(text, names):
    """The formulas of problem.toml: numbers, + - * / ^, min, max, log2 and the given names."""
    def walk(node):
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise ValueError(f"unknown name {node.id!r} in {text!r}")
            return names[node.id]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
            return _FUNCTIONS[node.func.id](*(walk(a) for a in node.args))
        raise ValueError(f"unsupported syntax {ast.dump(node)} in {text!r}")

    return walk(ast.parse(text.replace("^", "**"), mode="eval"))


def mesh_sizes(spec, W):
    mesh = spec.get("mesh")
    return [int(evaluate_formula(s, {"W": W})) for s in mesh["sizes"]] if mesh else []


def plan_of(name, W, shape=None, dtype=None):
    """The plan's "problem" object for world size W (and another shape or dtype, when given)."""
    spec = toml_of(name)
    dtype = dtype or spec["dtype"]
    rules = [spec.get("outputs", [])] + [[a for a in spec["inputs"] if a.get("in_place")]]
    judge = sorted({r["keys"] for group in rules for r in group if "keys" in r})
    return {
        "id": spec["id"], "name": name, "dtype": dtype,
        "shape": dict(spec["shape"] if shape is None else shape),
        "mesh": {"axes": spec["mesh"]["axes"], "sizes": mesh_sizes(spec, W)} if "mesh" in spec else None,
        "args": [{"name": a["name"], "type": a["type"], "group": a.get("group"), "in_place": a.get("in_place", False),
                  "dtype": a.get("dtype", dtype) if a["type"] in ("tensor", "tensors") else None}
                 for a in spec["inputs"]],
        "in_place": [i for i, a in enumerate(spec["inputs"]) if a.get("in_place")],
        "judge_data": judge,
    }


def problem_of(name, W, shape=None, dtype=None):
    return problem_api.Problem(plan_of(name, W, shape, dtype))
