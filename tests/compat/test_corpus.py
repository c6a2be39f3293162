"""The compatibility corpus: ordinary PyTorch programs (tests/compat/programs/) run unchanged on opgen.

Each program runs twice, in two subprocesses that run every program once (tests/compat/harness.py):
with `torch` mapped to `generated`, and with real PyTorch. `test_runs_on_opgen` needs the opgen run to
finish without error; `test_agrees_with_torch` compares every reported value (skipped without torch).
Programs make their data and initial weights from NumPy or explicit values, so the results do not
depend on the random streams, which differ between opgen and PyTorch.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((Path(__file__).parent / "programs").glob("p*.py"))
# Programs that use tensor ops another change adds (the name that is missing here).
NEEDS_OTHER_CHANGE: dict[str, str] = {
}
RTOL, ATOL = 2e-4, 1e-5


@cache
def run_all(backend: str) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, "-m", "tests.compat.harness", backend, *map(str, PROGRAMS)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    marker = "@@RESULTS@@"
    if marker not in proc.stdout:
        raise AssertionError(f"the {backend} harness died (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.rsplit(marker, 1)[1])


def _mark(path: Path) -> list[Any]:
    reason = NEEDS_OTHER_CHANGE.get(path.stem)
    return [pytest.mark.xfail(reason=f"needs {reason}", strict=False)] if reason else []


CASES = [pytest.param(p, id=p.stem, marks=_mark(p)) for p in PROGRAMS]


def _compare(got: Any, want: Any, where: str) -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), f"{where}: keys {sorted(got)} != {sorted(want)}"
        for k in want:
            _compare(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {got!r} != {want!r}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _compare(g, w, f"{where}[{i}]")
    elif isinstance(want, bool) or isinstance(got, bool) or isinstance(want, str) or want is None:
        assert got == want, f"{where}: {got!r} != {want!r}"
    elif isinstance(want, int) and isinstance(got, int):
        assert got == want, f"{where}: {got} != {want}"
    else:
        assert isinstance(got, (int, float)), f"{where}: {got!r} is not a number (want {want!r})"
        assert math.isclose(got, want, rel_tol=RTOL, abs_tol=ATOL), f"{where}: {got} != {want}"


def test_corpus_size() -> None:
    assert len(PROGRAMS) >= 20


@pytest.mark.parametrize("program", CASES)
def test_runs_on_opgen(program: Path) -> None:
    outcome = run_all("opgen")[str(program)]
    assert "error" not in outcome, outcome.get("error")
    assert outcome["results"], "the program reported nothing"


@pytest.mark.parametrize("program", CASES)
def test_agrees_with_torch(program: Path) -> None:
    if importlib.util.find_spec("torch") is None:
        pytest.skip("PyTorch (the `oracle` extra) is not installed")
    want = run_all("torch")[str(program)]
    assert "error" not in want, f"the program fails on PyTorch itself:\n{want.get('error')}"
    got = run_all("opgen")[str(program)]
    assert "error" not in got, got.get("error")
    _compare(got["results"], want["results"], program.stem)
