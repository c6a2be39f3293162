"""bench/run_all.py: reading every benchmark's table format, and tolerance of failing scripts."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load_run_all():
    spec = importlib.util.spec_from_file_location("bench_run_all", ROOT / "bench" / "run_all.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_run_all"] = module
    spec.loader.exec_module(module)
    return module


run_all = _load_run_all()


def _cells(rows):
    return [(r.figure, r.value, r.goal, r.ok) for r in rows]


def test_left_aligned_table() -> None:  # bench_codegen.py
    out = ("some log line\n"
           "figure                      value     goal      ok\n"
           "parse 2500 varied schemas   0.0712 s  < 0.09 s  yes\n"
           "opgen generate              failed    < 1 s     no\n")
    assert _cells(run_all.parse_figures("codegen", out)) == [
        ("parse 2500 varied schemas", "0.0712 s", "< 0.09 s", "yes"),
        ("opgen generate", "failed", "< 1 s", "NO"),
    ]


def test_right_aligned_table() -> None:  # bench_allocator.py
    out = (f"{'figure':<42}{'value':>14}  {'goal':>7}  ok\n"
           f"{'cached malloc+free pair, simulated (us)':<42}{'1.27':>14}  {'<= 3':>7}  yes\n"
           f"{'cached pair vs CuPy MemoryPool (x)':<42}{'n/a (no GPU)':>14}  {'<= 1.5':>7}  -\n")
    assert _cells(run_all.parse_figures("allocator", out)) == [
        ("cached malloc+free pair, simulated (us)", "1.27", "<= 3", "yes"),
        ("cached pair vs CuPy MemoryPool (x)", "n/a (no GPU)", "<= 1.5", "-"),
    ]


def test_single_space_columns() -> None:  # bench_dispatch.py
    out = (f"{'figure':<34} {'value':>8} {'goal':>6} {'ok':>4}\n"
           f"{'add (grad)':<34} {4.12:>8.2f} {4.5:>6.1f} {'yes':>4}\n"
           f"{'t()':<34} {12.5:>8.2f} {10.0:>6.1f} {'NO':>4}\n")
    assert _cells(run_all.parse_figures("dispatch", out)) == [
        ("add (grad)", "4.12", "4.5", "yes"), ("t()", "12.50", "10.0", "NO")]


def test_legacy_goal_lines() -> None:  # bench_autograd.py, bench_cuda.py
    out = ("numpy  step:     23.6 us\n"
           "opgen / numpy ratio: 7.03 (goal <= 5.0)\n"
           "add 2^28 float32:      0.93 of copy bandwidth (goal >= 0.9; CuPy 0.95)\n"
           "1-element add launch:  5.1 us, 1.10x CuPy (goal <= 1.2)\n"
           "torch / numpy ratio: 1.20\n")
    assert _cells(run_all.parse_figures("x", out)) == [
        ("opgen / numpy ratio", "7.03", "<= 5.0", "NO"),
        ("add 2^28 float32", "0.93", ">= 0.9", "yes"),
        ("1-element add launch", "1.10x", "<= 1.2", "yes"),
    ]


def _script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"bench_{name}.py"
    path.write_text(body)
    return path


def test_failing_silent_and_timed_out_scripts_get_a_row(tmp_path: Path) -> None:
    crash = _script(tmp_path, "crash", "print('figure value goal ok')\nprint('a  1  < 2  yes')\n"
                                       "raise SystemExit('boom')\n")
    rows, _ = run_all.run_script(crash, timeout=30, verbose=False)
    assert _cells(rows) == [("a", "1", "< 2", "yes"), ("(script)", "exit 1: boom", "-", "FAILED")]
    silent = _script(tmp_path, "gpu", "print('no GPU: CUDA benchmarks skipped')\n")
    rows, _ = run_all.run_script(silent, timeout=30, verbose=False)
    assert _cells(rows) == [("(no figures)", "no GPU: CUDA benchmarks skipped", "-", "-")]
    slow = _script(tmp_path, "slow", "import time\ntime.sleep(10)\n")
    rows, _ = run_all.run_script(slow, timeout=0.5, verbose=False)
    assert rows[0].ok == "FAILED" and "timed out" in rows[0].value


def test_table_and_discovery() -> None:
    rows = [run_all.Row("codegen", "parse", "0.07 s", "< 0.09 s", "yes")]
    text = run_all.format_table(rows)
    assert text.splitlines()[0].split() == ["bench", "figure", "value", "goal", "ok"]
    assert "codegen  parse   0.07 s  < 0.09 s  yes" in text
    names = [p.stem for p in run_all.discover()]
    assert "bench_demo" in names and names == sorted(names)
    assert [p.stem for p in run_all.discover(["demo"])] == ["bench_demo"]
