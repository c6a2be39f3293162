"""Benchmark: per-call overhead of the dispatcher against NumPy, on tiny CPU tensors.

Figures (each the median per-call time of opgen over NumPy's, measured in this one run):
  add            G.add(a, b), 4-element float32 tensors          / numpy.add(a, b)      goal <= 3.0
  add (grad)     the same with requires_grad=True on `a`         / numpy.add(a, b)      goal <= 4.5
  t()            t.t() on a 3x4 tensor                           / ndarray.T            goal <= 10.0

The five calls are timed in interleaved rounds (a busy machine slows them alike), each figure from the
median round. Prints a table `figure value goal ok`.
Run: `python bench/bench_dispatch.py [--repeat N] [--number N]`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def per_call(fns: list[Callable[[], object]], number: int, repeat: int) -> list[float]:
    """Median over `repeat` rounds of the mean time of one call (seconds) of each function, after a warm-up.

    The rounds of the functions are interleaved, so that a busy machine slows them alike and the ratios
    stay meaningful."""
    for fn in fns:
        for _ in range(min(number, 1000)):
            fn()
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, times in zip(fns, samples, strict=True):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            times.append((time.perf_counter() - start) / number)
    return [statistics.median(times) for times in samples]


def measure(number: int, repeat: int) -> list[tuple[str, float, float]]:
    import generated as G

    x = np.arange(4, dtype=np.float32)
    y = np.arange(4, dtype=np.float32) + 1
    a, b = G.tensor(x), G.tensor(y)
    ag = G.tensor(x, requires_grad=True)
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    tm = G.tensor(m)

    add = G.add
    np_add = np.add
    t_np_add, t_add, t_add_grad, t_np_T, t_t = per_call(
        [lambda: np_add(x, y), lambda: add(a, b), lambda: add(ag, b), lambda: m.T, lambda: tm.t()], number, repeat)
    return [
        ("add / numpy.add", t_add / t_np_add, 3.0),
        ("add(requires_grad) / numpy.add", t_add_grad / t_np_add, 4.5),
        ("t() / ndarray.T", t_t / t_np_T, 10.0),
        ("numpy.add us", t_np_add * 1e6, float("nan")),
        ("G.add us", t_add * 1e6, float("nan")),
        ("G.add(requires_grad) us", t_add_grad * 1e6, float("nan")),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=25)
    parser.add_argument("--number", type=int, default=2000)
    args = parser.parse_args(argv)
    rows = measure(args.number, args.repeat)
    print(f"{'figure':<34} {'value':>8} {'goal':>6} {'ok':>4}")
    for name, value, goal in rows:
        if goal != goal:  # informational row (NaN goal)
            print(f"{name:<34} {value:>8.3f} {'-':>6} {'-':>4}")
        else:
            print(f"{name:<34} {value:>8.2f} {goal:>6.1f} {'yes' if value <= goal else 'NO':>4}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
