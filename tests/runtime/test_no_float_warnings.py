"""Note [Floating-point warnings] (runtime/kernels/__init__.py): opgen's CPU kernels print no NumPy
RuntimeWarning for division by zero, overflow, invalid values or casts, as PyTorch's kernels print nothing,
and the user's own NumPy code still warns. Checked in a fresh interpreter, as a user's script sees it
(pytest's own warning capture replaces the process's filters around collection)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]

# name -> an expression over G (the library: generated or torch) and x, a float32 tensor [1., 0., -1.]
CASES = {
    "x / 0": "x / 0",
    "x / zeros": "x / G.zeros(3)",
    "0 / 0": "G.tensor([0.0]) / 0",
    "x // 0.": "G.floor_divide(x, 0.0)",
    "fmod": "G.fmod(x, 0.0)",
    "remainder": "G.remainder(x, 0.0)",
    "reciprocal": "G.reciprocal(x)",
    "rsqrt": "G.rsqrt(x)",
    "x ** -1": "x ** -1",
    "log": "G.log(x)",
    "log2": "G.log2(x)",
    "log10": "G.log10(x)",
    "log1p": "G.log1p(-x)",
    "sqrt": "G.sqrt(x)",
    "acos": "G.acos(x * 2)",
    "exp overflow": "G.exp(x * 1000)",
    "cosh overflow": "G.cosh(x * 1000)",
    "mul overflow": "x * 3e38 * 10",
    "scalar overflow": "x * 1e300",
    "float64 scalar cast": "x + G.tensor(1e300, dtype=G.float64)",
    "div_ in place": "x.clone().div_(0)",
    "div out=": "G.div(x, 0, out=G.empty(3))",
    "addcdiv": "G.addcdiv(x, x, G.zeros(3))",
    "nan to int": "G.tensor([float('nan')]).to(G.int32) * 0",
    "sum overflow": "G.tensor([3e38, 3e38]).sum()",
}

SCRIPT = """
import json, sys
import generated as G
x = G.tensor([1.0, 0.0, -1.0])
out = {}
for name, expr in json.loads(sys.argv[1]).items():
    out[name] = eval(expr, {"G": G, "x": x}).tolist()
import numpy as np
np.ones(1) / 0  # the user's own NumPy code: still warns
print(json.dumps(out))
"""


def _run(flag: str) -> tuple[dict[str, object], str]:
    proc = subprocess.run([sys.executable, flag, "-c", SCRIPT, json.dumps(CASES)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    return (json.loads(proc.stdout) if proc.returncode == 0 else {}), proc.stderr


def test_kernels_print_no_floating_point_warnings() -> None:
    values, stderr = _run("-Wdefault")
    lines = [line for line in stderr.splitlines() if "Warning" in line]
    # exactly one warning: the script's own `np.ones(1) / 0`, attributed to the script, not to opgen
    assert len(lines) == 1 and lines[0].startswith("<string>:") and "divide by zero" in lines[0], stderr
    assert set(values) == set(CASES)


def test_kernels_do_not_raise_under_warnings_as_errors() -> None:
    """`python -W error` turns the user's NumPy warnings into exceptions; opgen's kernels still return."""
    values, stderr = _run("-Werror")
    assert "RuntimeWarning: divide by zero" in stderr and "<string>" in stderr  # the script's own line
    assert values == {} or set(values) == set(CASES)
    proc = subprocess.run([sys.executable, "-Werror", "-c", SCRIPT.replace("np.ones(1) / 0", "None"),
                           json.dumps(CASES)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert set(json.loads(proc.stdout)) == set(CASES)


def test_values_vs_torch() -> None:
    torch = pytest.importorskip("torch")
    values, _ = _run("-Wignore")
    x = torch.tensor([1.0, 0.0, -1.0])
    for name, expr in CASES.items():
        expected = eval(expr, {"G": torch, "x": x}).tolist()
        np.testing.assert_array_equal(np.array(values[name], dtype=float), np.array(expected, dtype=float),
                                      err_msg=name)
