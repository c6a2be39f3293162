"""Run every benchmark of bench/ and print one table of all their figures, each with its goal.

    python bench/run_all.py [--only NAME ...] [--timeout S] [--verbose]

Each `bench/bench_*.py` runs in its own process, one after another (never in parallel: they time
things), so every ratio in the table was measured in this run. A script reports its figures in a
final table whose header is the four words `figure value goal ok`, one figure per row, cells
separated by two or more spaces (the `ok` cell is the row's last word: yes, no/NO, or - where there
is no goal). Lines of the older form `label: ... VALUE ... (goal OP X)` are read too (the value
is the last number before the goal). A script that exits non-zero or times out still gets a row,
marked FAILED, so one broken benchmark never hides the others; one that prints no figure and exits
0 (a CUDA benchmark without a GPU) gets a row saying why.

Exit status: 0 when no figure missed its goal and no script failed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
HEADER = ["figure", "value", "goal", "ok"]
OK_WORDS = {"yes": "yes", "ok": "yes", "no": "NO", "fail": "NO", "-": "-", "n/a": "-"}
_CELL_SPLIT = re.compile(r"\s{2,}")
_LEGACY = re.compile(r"^\s*(?P<figure>[^:(]+?):(?P<middle>[^(]*)\(goal (?P<op><=|>=|<|>|==) "
                     r"(?P<goal>[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?x?")


@dataclass
class Row:
    script: str
    figure: str
    value: str
    goal: str
    ok: str  # "yes", "NO", "-" or "FAILED"


def discover(only: list[str] | None = None) -> list[Path]:
    """bench/bench_*.py in name order, or just the ones named (`cuda`, `bench_cuda` or `bench_cuda.py`)."""
    scripts = sorted(BENCH_DIR.glob("bench_*.py"))
    if not only:
        return scripts
    wanted = {n.removesuffix(".py").removeprefix("bench_") for n in only}
    unknown = wanted - {p.stem.removeprefix("bench_") for p in scripts}
    if unknown:
        raise SystemExit(f"no such benchmark: {', '.join(sorted(unknown))} (have: "
                         f"{', '.join(p.stem.removeprefix('bench_') for p in scripts)})")
    return [p for p in scripts if p.stem.removeprefix("bench_") in wanted]


def _split_row(line: str) -> tuple[str, str, str, str] | None:
    words = line.split()
    if len(words) < 3 or words[-1].lower() not in OK_WORDS:
        return None
    ok = OK_WORDS[words[-1].lower()]
    rest = line.rstrip()[: line.rstrip().rfind(words[-1])].rstrip()
    cells = _CELL_SPLIT.split(rest.strip())
    if len(cells) >= 3:
        return "  ".join(cells[:-2]), cells[-2], cells[-1], ok
    if len(cells) == 2 and " " in cells[1]:  # value and goal separated by one space
        value, goal = cells[1].rsplit(" ", 1)
        return cells[0], value, goal, ok
    return None


def _legacy_ok(value: float, op: str, goal: float) -> str:
    met = {"<=": value <= goal, ">=": value >= goal, "<": value < goal, ">": value > goal,
           "==": value == goal}[op]
    return "yes" if met else "NO"


def parse_figures(script: str, output: str) -> list[Row]:
    """The figures of one script's output: its `figure value goal ok` table, else legacy goal lines."""
    lines = output.splitlines()
    header_at = [i for i, line in enumerate(lines) if line.split() == HEADER]
    rows: list[Row] = []
    if header_at:
        for line in lines[header_at[-1] + 1:]:
            if not line.strip():
                continue
            cells = _split_row(line)
            if cells is None:
                continue
            rows.append(Row(script, *cells))
        return rows
    for line in lines:
        m = _LEGACY.match(line)
        numbers = _NUMBER.findall(m["middle"]) if m else []
        if numbers:  # the value is the last number before "(goal": "5.1 us, 1.10x CuPy (goal <= 1.2)"
            value = numbers[-1]
            ok = _legacy_ok(float(value.rstrip("x")), m["op"], float(m["goal"]))
            rows.append(Row(script, m["figure"].strip(), value, f"{m['op']} {m['goal']}", ok))
    return rows


def run_script(path: Path, timeout: float, verbose: bool) -> tuple[list[Row], float]:
    """Run one benchmark; its rows (or one failed row) and its wall time."""
    name = path.stem.removeprefix("bench_")
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, str(path)], cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return [Row(name, "(script)", f"timed out after {timeout:.0f} s", "-", "FAILED")], timeout
    elapsed = time.perf_counter() - start
    output = proc.stdout + ("\n" + proc.stderr if proc.stderr else "")
    if verbose:
        print(f"--- {path.name} (exit {proc.returncode}, {elapsed:.1f} s)\n{output.rstrip()}\n", flush=True)
    rows = parse_figures(name, proc.stdout)
    last = (output.strip().splitlines() or ["no output"])[-1].strip()
    if proc.returncode != 0:
        rows.append(Row(name, "(script)", f"exit {proc.returncode}: {last[:48]}", "-", "FAILED"))
    elif not rows:
        # No figures and no error: a benchmark that does not apply here (e.g. "no GPU").
        rows.append(Row(name, "(no figures)", last[:48], "-", "-"))
    return rows, elapsed


def format_table(rows: list[Row]) -> str:
    table = [("bench", "figure", "value", "goal", "ok")] + [(r.script, r.figure, r.value, r.goal, r.ok)
                                                            for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(5)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run these benchmarks only (e.g. cuda demo)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds allowed per script")
    parser.add_argument("--verbose", action="store_true", help="also print each script's own output")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    for path in discover(args.only):
        print(f"running {path.name} ...", file=sys.stderr, flush=True)
        script_rows, elapsed = run_script(path, args.timeout, args.verbose)
        print(f"  {path.name}: {len(script_rows)} figure(s) in {elapsed:.1f} s", file=sys.stderr, flush=True)
        rows += script_rows
    print(format_table(rows))
    missed = [r for r in rows if r.ok in ("NO", "FAILED")]
    print(f"\n{len(rows)} figures from {len({r.script for r in rows})} benchmarks; "
          f"{sum(r.ok == 'yes' for r in rows)} met their goal, {len(missed)} missed or failed")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
