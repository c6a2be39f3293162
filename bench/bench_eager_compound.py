"""Benchmark: eager compound pointwise ops on their compiled C++ kernels, against the NumPy kernels they
replace and against PyTorch, one thread, measured in the same run (Note [Compiled eager pointwise kernels]).

Each op runs on --size float32 elements (default 10^6) three ways, back to back in each of --repeat rounds:
opgen with its compiled kernel, opgen with the compiled path off (the generated NumPy kernel: the library's
`min_work` raised out of reach) and PyTorch (`torch.set_num_threads(1)`); a time is the best of the rounds.
The figures are the compiled kernel's time over NumPy's (goal <= 1.0: never slower) and over PyTorch's (no
goal), then the library's first build in a fresh cache and its load from the cache in a new process (goal
<= 0.5 s), each timed in a child process.
`--threshold` instead measures, per compiled op and dtype, the smallest power-of-two size from which the
compiled kernel is faster than the NumPy one (median of the paired rounds' ratios) at that size and every
larger size tried (the basis of MIN_WORK, Note [Compiled eager pointwise kernels]). Ops that stay on NumPy
(Note [Compound pointwise ops]) are timed too: both columns are then the NumPy kernel.
Run: `python bench/bench_eager_compound.py [--size N] [--repeat N] [--dtype float32|float64] [--threshold]`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import generated as G  # noqa: E402
from generated import _cpu_kernels as K  # noqa: E402
from runtime.kernels import compiled_pointwise as cp  # noqa: E402

# name -> (number of tensor inputs, the call in a library whose namespace is `m` (generated or torch))
OPS: dict[str, tuple[int, Callable[[Any, list[Any]], Any]]] = {
    "sigmoid": (1, lambda m, t: m.sigmoid(t[0])),
    "silu": (1, lambda m, t: m.nn.functional.silu(t[0])),
    "softplus": (1, lambda m, t: m.nn.functional.softplus(t[0])),
    "mish": (1, lambda m, t: m.nn.functional.mish(t[0])),
    "elu": (1, lambda m, t: m.nn.functional.elu(t[0])),
    "hardswish": (1, lambda m, t: m.nn.functional.hardswish(t[0])),
    "hardsigmoid": (1, lambda m, t: m.nn.functional.hardsigmoid(t[0])),
    "leaky_relu": (1, lambda m, t: m.nn.functional.leaky_relu(t[0], 0.1)),
    "log_sigmoid": (1, lambda m, t: m.nn.functional.logsigmoid(t[0])),
    "erf": (1, lambda m, t: m.erf(t[0])),
    "rsqrt": (1, lambda m, t: m.rsqrt(t[0])),
    "frac": (1, lambda m, t: m.frac(t[0])),
    "hardtanh": (1, lambda m, t: m.nn.functional.hardtanh(t[0])),
    "logaddexp": (2, lambda m, t: m.logaddexp(t[0], t[1])),
    "hypot": (2, lambda m, t: m.hypot(t[0], t[1])),
    "xlogy": (2, lambda m, t: m.xlogy(t[0], t[1])),
    "lerp": (3, lambda m, t: m.lerp(t[0], t[1], t[2])),
    "addcmul": (3, lambda m, t: m.addcmul(t[0], t[1], t[2], value=0.5)),
    "addcdiv": (3, lambda m, t: m.addcdiv(t[0], t[1], t[2], value=0.5)),
}


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch


def best(fn: Callable[[], Any], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def inputs(n_tensors: int, size: int, dtype: str, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [np.abs(rng.standard_normal(size)).astype(dtype) + 0.5 for _ in range(n_tensors)]


def compare(lib: cp.Library, torch: Any, size: int, dtype: str, repeat: int) -> dict[str, tuple[float, ...]]:
    """op -> (compiled, NumPy kernel, PyTorch) seconds per call."""
    number = max(1, min(50, 2_000_000 // size))
    out = {}
    for name, (n, call) in OPS.items():
        arrays = inputs(n, size, dtype)
        ours = [G.from_numpy(a) for a in arrays]
        theirs = [torch.from_numpy(a) for a in arrays] if torch is not None else []
        times: dict[str, list[float]] = {"cpp": [], "numpy": [], "torch": []}
        call(G, ours)  # first calls: entry points resolved, pages touched
        for _ in range(repeat):
            lib.min_work = cp.MIN_WORK
            times["cpp"].append(best(lambda: call(G, ours), number))  # noqa: B023
            lib.min_work = cp.NEVER
            times["numpy"].append(best(lambda: call(G, ours), number))  # noqa: B023
            if torch is not None:
                times["torch"].append(best(lambda: call(torch, theirs), number))  # noqa: B023
        lib.min_work = cp.MIN_WORK
        out[name] = (min(times["cpp"]), min(times["numpy"]), min(times["torch"]) if torch is not None else 0.0)
    return out


def compiled(lib: cp.Library, call: Callable[[Any, list[Any]], Any], n: int) -> bool:
    """Whether the op that `call` makes runs on the compiled library."""
    answered = []
    run = lib.run
    lib.run = lambda *a: answered.append(run(*a)) or answered[-1]  # type: ignore[method-assign]
    lib.min_work = 1
    try:
        call(G, [G.from_numpy(a) for a in inputs(n, 64, "float32")])
    finally:
        del lib.run
        lib.min_work = cp.MIN_WORK
    return any(r is not None for r in answered)


def threshold(lib: cp.Library, dtype: str, repeat: int) -> dict[str, int]:
    """compiled op -> the smallest size from which its kernel wins at every size tried (0: it never does)."""
    sizes = [2**k for k in range(6, 18)]
    result = {}
    for name, (n, call) in OPS.items():
        if not compiled(lib, call, n):
            continue
        wins = []
        for size in sizes:
            ours = [G.from_numpy(a) for a in inputs(n, size, dtype)]
            number = max(5, min(2000, 200_000 // size))
            ratios = []
            for _ in range(repeat):
                lib.min_work = 1
                cpp = best(lambda: call(G, ours), number)  # noqa: B023
                lib.min_work = cp.NEVER
                ratios.append(cpp / best(lambda: call(G, ours), number))  # noqa: B023
            wins.append(float(np.median(ratios)) < 1.0)
        lib.min_work = cp.MIN_WORK
        first = next((i for i in range(len(sizes)) if all(wins[i:])), None)
        result[name] = sizes[first] if first is not None else 0
    return result


def build_times() -> tuple[float, float]:
    """(first build in an empty cache, load from that cache), each in a new process, seconds from the first
    call that starts the build to the library being ready."""
    code = textwrap.dedent("""
        import time
        import generated as G
        from generated import _cpu_kernels as K
        x = G.randn(100_000)
        start = time.perf_counter()
        G.sigmoid(x)
        state = K._CPP.wait()
        print(state, time.perf_counter() - start)
        """)
    with tempfile.TemporaryDirectory(prefix="opgen-bench-cache-") as cache:
        env = dict(os.environ, XDG_CACHE_HOME=cache, PYTHONPATH=str(ROOT))
        seconds = []
        for _ in range(2):
            proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=900)
            state, value = proc.stdout.split()[-2:] if proc.returncode == 0 else ("failed", "nan")
            if state != "ready":
                raise SystemExit(f"the library did not build: {state}\n{proc.stderr[-2000:]}")
            seconds.append(float(value))
    return seconds[0], seconds[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    parser.add_argument("--threshold", action="store_true")
    args = parser.parse_args()
    lib = K._CPP
    if lib.min_work >= cp.NEVER:
        raise SystemExit(f"the compiled path is off ({cp.ENV}=0)")
    state = lib.wait()
    if state != "ready":
        print(f"no compiled kernels here ({state}): the ops run on NumPy")
        return
    if args.threshold:
        for dtype in ("float32", "float64"):
            found = threshold(lib, dtype, args.repeat)
            print(f"{dtype}: " + ", ".join(f"{k} {v}" for k, v in found.items()))
            print(f"{dtype}: every compiled op wins from {max(found.values())} elements (MIN_WORK = {cp.MIN_WORK} "
                  "elements x passes)")
        return
    torch = _torch()
    results = compare(lib, torch, args.size, args.dtype, args.repeat)
    on = {name: compiled(lib, call, n) for name, (n, call) in OPS.items()}
    print(f"{args.size} {args.dtype} elements, one thread, best of {args.repeat} rounds (ms per call); "
          "ops marked * stay on NumPy (Note [Compound pointwise ops])")
    print(f"{'op':<12} {'compiled':>9} {'NumPy':>9} {'PyTorch':>9} {'vs NumPy':>9} {'vs PyTorch':>10}")
    for name, (cpp, numpy_, torch_) in results.items():
        vs_torch = f"{cpp / torch_:.2f}" if torch_ else "-"
        label = name if on[name] else name + " *"
        print(f"{label:<12} {cpp * 1e3:9.3f} {numpy_ * 1e3:9.3f} {torch_ * 1e3:9.3f} {cpp / numpy_:9.2f} "
              f"{vs_torch:>10}")
    first, cached = build_times()
    print("\nfigure  value  goal  ok")
    for name, (cpp, numpy_, torch_) in results.items():
        if not on[name]:
            continue
        ratio = cpp / numpy_
        print(f"{name} compiled/NumPy  {ratio:.2f}  <= 1.0  {'yes' if ratio <= 1.0 else 'NO'}")
        if torch_:
            print(f"{name} compiled/PyTorch  {cpp / torch_:.2f}  -  -")
    print(f"first build (s)  {first:.2f}  -  -")
    print(f"cached load in a new process (s)  {cached:.3f}  <= 0.5  {'yes' if cached <= 0.5 else 'NO'}")


if __name__ == "__main__":
    main()
