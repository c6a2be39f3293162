"""Codegen benchmark: schema parsing speed and `opgen generate` wall time.

    python bench/bench_codegen.py

Figures (median of several runs, parse caches cleared before each run so every run is a cold parse):
- parse 2,500 varied schemas built from tests/data/schemas_hard.txt, with operator, argument and return names
  made unique so no two schemas are alike (goal < 0.09 s);
- parse PyTorch's native_functions.yaml when OPGEN_TORCH_NATIVE_FUNCTIONS or the default path points to it
  (same goal; reported only when found);
- `python -m codegen generate --root ROOT` (goal < 1 s; reported as failed if the CLI fails), median of
  runs interleaved with `python3 -c pass`, with bytecode caching on as an installed package has it
  (`bytecode_env`), then again without (this machine sets PYTHONDONTWRITEBYTECODE, so every run would
  compile the generator's modules: shown for comparison, not the goal's figure);
- the same in a temporary copy of the project with 0, 1,000 and 5,000 extra pointwise ops (each with its
  in-place and out forms and a derivative), into an empty generated/; the time per 1,000 ops between the
  rows shows whether generate time is linear in the number of ops (`--scale 0,1000` picks the rows).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from codegen.model import FunctionSchema  # noqa: E402
from codegen.schema_parser import clear_caches, parse_schema  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "schemas_hard.txt"
DEFAULT_TORCH_FILE = "/tmp/ref/torchgen/packaged/ATen/native/native_functions.yaml"
N_SCHEMAS = 2500
RUNS = 7
PARSE_GOAL_S = 0.09
GENERATE_GOAL_S = 1.0


def varied_schemas(n: int = N_SCHEMAS) -> list[str]:
    """`n` distinct schemas: the corpus cycled, each copy with its own operator, argument, return names."""
    base = [parse_schema(line) for line in CORPUS.read_text().splitlines() if line]
    out = []
    for i in range(n):
        s = base[i % len(base)]
        tag = f"v{i}"
        name = dataclasses.replace(s.name, base=f"{tag}_{s.name.base.strip('_')}", dunder=False)

        def rename(args: tuple, tag: str = tag) -> tuple:
            return tuple(dataclasses.replace(a, name=f"{a.name}_{tag}") for a in args)

        arguments = dataclasses.replace(
            s.arguments,
            positional=rename(s.arguments.positional),
            kwarg_only=rename(s.arguments.kwarg_only),
            out=rename(s.arguments.out),
        )
        returns = tuple(
            dataclasses.replace(r, name=None if r.name is None else f"{r.name}_{tag}") for r in s.returns
        )
        out.append(str(FunctionSchema(name, arguments, returns)))
    return out


def torch_schemas() -> list[str] | None:
    """PyTorch's schemas, or None when the file (or PyYAML) is not available."""
    path = Path(os.environ.get("OPGEN_TORCH_NATIVE_FUNCTIONS", DEFAULT_TORCH_FILE))
    if not path.is_file():
        return None
    try:
        import yaml
    except ImportError:
        return None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [entry["func"] for entry in yaml.load(path.read_text(), Loader=loader)]


def median_seconds(fn: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        clear_caches()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def time_parse(schemas: list[str]) -> float:
    parse = parse_schema
    for s in schemas:  # check once, outside the timing, that every schema round-trips
        if str(parse(s)) != s:
            raise SystemExit(f"round-trip failed: {s}")
    return median_seconds(lambda: [parse(s) for s in schemas])


def bytecode_env(cache: str) -> dict[str, str]:
    """The environment with bytecode caching on, as an installed package has it: this machine sets
    PYTHONDONTWRITEBYTECODE, which would time the compilation of every codegen module on each run; the
    caches go to `cache` instead (bench_cpu_paths.measure_import does the same for `import generated`)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache
    return env


def time_generate(env: dict[str, str] | None = None, runs: int = RUNS) -> tuple[float | None, float, str]:
    """Median seconds of `opgen generate` on this project and of `python3 -c pass`, interleaved, in `env`
    (None: this process's); None and the reason when the CLI fails. A first, untimed run fills the caches."""
    cmd = [sys.executable, "-m", "codegen", "generate", "--root", str(ROOT)]
    gen: list[float] = []
    bare: list[float] = []
    for i in range(runs + 1):
        start = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as exc:
            return None, 0.0, str(exc)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            last = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            return None, 0.0, f"exit {proc.returncode}: {last[0]}"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
        if i:
            gen.append(elapsed)
            bare.append(time.perf_counter() - start)
    return statistics.median(gen), statistics.median(bare), ""


EXTRA_OP = """
- func: bench_op{i}(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method
  pointwise: self * other + alpha * exp(self)
"""
EXTRA_DERIVATIVE = """
- name: bench_op{i}(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  self: grad * other + grad * alpha * result
  other: grad * self
"""


def scaled_project(n: int, into: Path) -> Path:
    """A copy of the project with `n` extra pointwise ops and their derivatives, and no generated/."""
    for name in ("runtime", "templates"):
        shutil.copytree(ROOT / name, into / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name, extra in (("native_functions.yaml", EXTRA_OP), ("derivatives.yaml", EXTRA_DERIVATIVE)):
        text = (ROOT / name).read_text() + "".join(extra.format(i=i) for i in range(n))
        (into / name).write_text(text)
    return into


def time_generate_scaled(n: int) -> tuple[float | None, str]:
    with tempfile.TemporaryDirectory(prefix="opgen-bench-") as tmp:
        root = scaled_project(n, Path(tmp))
        cmd = [sys.executable, "-m", "codegen", "generate", "--root", str(root)]
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            return None, (proc.stderr or proc.stdout).strip()[-300:]
        return elapsed, ""


def scaling_rows(sizes: list[int]) -> list[tuple[str, str, str, str]]:
    rows = []
    times: dict[int, float] = {}
    for n in sizes:
        t, why = time_generate_scaled(n)
        if t is None:
            rows.append((f"generate, {n:,} extra ops", "failed", "-", "no"))
            print(f"generate with {n} extra ops failed: {why}", file=sys.stderr)
            continue
        times[n] = t
        print(f"generate with {n:,} extra ops: {t:.2f} s", file=sys.stderr, flush=True)  # progress of long runs
        rows.append((f"generate, {n:,} extra ops", f"{t:.2f} s", "-", "-"))
    done = sorted(times)
    for a, b in zip(done, done[1:], strict=False):
        slope = (times[b] - times[a]) / (b - a) * 1000
        rows.append((f"  s per 1,000 ops, {a:,} -> {b:,}", f"{slope:.2f} s", "flat (linear)", "-"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="0,1000,5000",
                        help="extra-op counts of the scaling rows (comma-separated; '' for none)")
    args = parser.parse_args()
    rows: list[tuple[str, str, str, str]] = []
    schemas = varied_schemas()
    t = time_parse(schemas)
    rows.append(
        (f"parse {len(schemas)} varied schemas", f"{t:.4f} s", f"< {PARSE_GOAL_S} s", _ok(t, PARSE_GOAL_S))
    )
    torch = torch_schemas()
    if torch is not None:
        t = time_parse(torch)
        rows.append(
            (f"parse {len(torch)} torch schemas", f"{t:.4f} s", f"< {PARSE_GOAL_S} s", _ok(t, PARSE_GOAL_S))
        )
    with tempfile.TemporaryDirectory(prefix="opgen-pycache-") as cache:
        for label, env in (("", bytecode_env(cache)), (", no bytecode cache", None)):
            gen, bare, why = time_generate(env)
            rows.append((f"python3 -c pass (interpreter start, same run{label})", f"{bare:.3f} s", "-", "-"))
            if gen is None:
                rows.append((f"opgen generate{label}", "failed", f"< {GENERATE_GOAL_S} s", "no"))
                print(f"opgen generate failed: {why}", file=sys.stderr)
            elif label:  # what this machine's PYTHONDONTWRITEBYTECODE costs on top; not the goal's figure
                rows.append((f"opgen generate{label}", f"{gen:.3f} s", "-", "-"))
            else:
                rows.append(("opgen generate", f"{gen:.3f} s", f"< {GENERATE_GOAL_S} s", _ok(gen, GENERATE_GOAL_S)))
    rows.extend(scaling_rows([int(n) for n in args.scale.split(",") if n.strip()]))
    _print_table([("figure", "value", "goal", "ok"), *rows])


def _ok(value: float, goal: float) -> str:
    return "yes" if value < goal else "no"


def _print_table(rows: list[tuple[str, str, str, str]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


if __name__ == "__main__":
    main()
