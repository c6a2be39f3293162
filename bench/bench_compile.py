"""G.compile against eager execution, NumPy and PyTorch (eager and torch.compile), one thread each, measured in
the same run:

    OPENBLAS_NUM_THREADS=1 python3 bench/bench_compile.py

- the tanh-GELU with a residual scale, 0.5*x*(1+tanh(0.7978845608*(x+0.044715*x^3)))*1.5 + x, at 10^6 float32;
- the first call (capture and C++ compile, cold kernel cache) and the first call in a new process with the
  kernel cache warm.
Goals (issue 25): compiled <= 0.8x torch.compile's time and <= 0.3x opgen eager's; a cached compile in a new
process within 0.5 s.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
N = 1_000_000


def gelu(x, tanh):  # type: ignore[no-untyped-def]
    return 0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x * x * x))) * 1.5 + x


def best(fn, rounds: int = 15) -> float:  # type: ignore[no-untyped-def]
    fn()
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def first_call_seconds(cache: str) -> float:
    code = ("import time, generated as G\n"
            "x = G.randn(1000)\n"
            "f = G.compile(lambda x: 0.5 * x * (1 + G.tanh(0.7978845608 * (x + 0.044715 * x * x * x))) * 1.5 + x)\n"
            "t = time.perf_counter(); f(x); print(time.perf_counter() - t)\n")
    env = {**os.environ, "XDG_CACHE_HOME": cache, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    import generated as G

    x_np = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    x = G.from_numpy(x_np)
    compiled = G.compile(lambda t: gelu(t, G.tanh))
    compiled(x)
    rows = {
        "NumPy": best(lambda: gelu(x_np, np.tanh)),
        "opgen eager": best(lambda: gelu(x, G.tanh)),
        "opgen G.compile": best(lambda: compiled(x)),
    }
    try:
        import torch

        torch.set_num_threads(1)
        xt = torch.from_numpy(x_np)
        rows["PyTorch eager"] = best(lambda: gelu(xt, torch.tanh))
        tc = torch.compile(lambda t: gelu(t, torch.tanh))
        tc(xt)
        rows["torch.compile"] = best(lambda: tc(xt))
    except Exception as e:
        print(f"(PyTorch rows left out: {type(e).__name__}: {e})")
    print(f"GELU-residual at {N:,} float32, one thread (median of 15):")
    for name, seconds in rows.items():
        print(f"  {name:<18} {seconds * 1e3:8.2f} ms")
    print(f"  compiled / opgen eager     {rows['opgen G.compile'] / rows['opgen eager']:.2f}  (goal <= 0.3)")
    if "torch.compile" in rows:
        print(f"  compiled / torch.compile   {rows['opgen G.compile'] / rows['torch.compile']:.2f}  (goal <= 0.8)")
    with tempfile.TemporaryDirectory() as cache:
        cold = first_call_seconds(cache)
        warm = first_call_seconds(cache)
    print(f"first call, cold kernel cache: {cold:.2f} s; first call in a new process, cache warm: {warm:.2f} s "
          "(goal <= 0.5 s)")


if __name__ == "__main__":
    main()
