"""Benchmark: per-call time of the CPU paths off the pointwise fast path, against PyTorch and NumPy.

Rows: factories (zeros, ones, empty, full, arange, tensor from a list, *_like), indexing (int, slice,
None, Ellipsis, negative, a bool mask, an index tensor, and assignment through each), views (view,
reshape, permute, transpose, unsqueeze, squeeze, expand, narrow, flatten), scalar arithmetic
(`a * 2.0`, `2.0 - a`, `a / 3`) and reductions of a small tensor (sum, mean, amax, with and without
dim). Every call runs on a small float32 tensor (4x4) on the CPU; PyTorch runs with one thread.
Then large tensors (10^5 and 10^6 float32 elements: pointwise ops, reductions, softmax, log_softmax,
matmul of square matrices of as many elements) against NumPy (goal <= 1.05: no overhead above the array
library), and `python -c "import generated"` against `python -c pass` (goal < 0.3 s, start included).

Each figure is opgen's median per-call time over PyTorch's (goal <= 1.0; the issue's aim is 0.7), the
three libraries timed back to back in each of --repeat rounds of the same run, the ratio the
median of the rounds' ratios (paired_rounds, Note [Stable large rows]). Without PyTorch
the table shows opgen over NumPy, with no goal. Prints the times, then the table `figure value goal ok`.
Run: `python bench/bench_cpu_paths.py [--repeat N] [--number N] [--only SUBSTRING]`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# One BLAS thread, as PyTorch is given one: on the shared 2-core machine a multi-threaded OpenBLAS spins
# against the other processes (a wide matmul then takes 100x longer) and the ratios would measure that.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

GOAL = 1.0
AIM = 0.7


def _try_torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch


def cases(lib: Any, is_numpy: bool = False) -> dict[str, Callable[[], object]]:
    """name -> a call of `lib` (generated, torch or numpy), the same computation in each."""
    f32 = lib.float32
    x = lib.ones((4, 4), dtype=f32) if not is_numpy else np.ones((4, 4), dtype=np.float32)
    v = lib.ones((4, 4), dtype=f32) if not is_numpy else np.ones((4, 4), dtype=np.float32)
    mask_np = np.array([True, False, True, False])
    idx_np = np.array([0, 2])
    if is_numpy:
        mask, idx = mask_np, idx_np
        t_list = lambda: np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)  # noqa: E731
        full = lambda: np.full((4, 4), 2.0, dtype=np.float32)  # noqa: E731
        arange = lambda: np.arange(16)  # noqa: E731
        empty_like = lambda: np.empty_like(x)  # noqa: E731
        zeros_like = lambda: np.zeros_like(x)  # noqa: E731
        ones_like = lambda: np.ones_like(x)  # noqa: E731
        view = lambda: x.reshape(2, 8)  # noqa: E731
        permute = lambda: x.transpose(1, 0)  # noqa: E731
        transpose = lambda: x.swapaxes(0, 1)  # noqa: E731
        unsqueeze = lambda: np.expand_dims(x, 0)  # noqa: E731
        s1 = x.reshape(4, 1, 4)
        squeeze = lambda: s1.squeeze(1)  # noqa: E731
        c = x[:1]
        expand = lambda: np.broadcast_to(c, (4, 4))  # noqa: E731
        narrow = lambda: x[1:3]  # noqa: E731
        flatten = lambda: x.reshape(-1)  # noqa: E731
        amax = lambda: x.max()  # noqa: E731
        amax_dim = lambda: x.max(axis=1)  # noqa: E731
        sum_dim = lambda: x.sum(axis=1)  # noqa: E731
        mean_dim = lambda: x.mean(axis=1)  # noqa: E731
    else:
        mask, idx = lib.tensor(mask_np), lib.tensor(idx_np)
        t_list = lambda: lib.tensor([1.0, 2.0, 3.0, 4.0])  # noqa: E731
        full = lambda: lib.full((4, 4), 2.0)  # noqa: E731
        arange = lambda: lib.arange(16)  # noqa: E731
        empty_like = lambda: lib.empty_like(x)  # noqa: E731
        zeros_like = lambda: lib.zeros_like(x)  # noqa: E731
        ones_like = lambda: lib.ones_like(x)  # noqa: E731
        view = lambda: x.view(2, 8)  # noqa: E731
        permute = lambda: x.permute(1, 0)  # noqa: E731
        transpose = lambda: x.transpose(0, 1)  # noqa: E731
        unsqueeze = lambda: x.unsqueeze(0)  # noqa: E731
        s1 = x.reshape(4, 1, 4)
        squeeze = lambda: s1.squeeze(1)  # noqa: E731
        c = x[:1]
        expand = lambda: c.expand(4, 4)  # noqa: E731
        narrow = lambda: x.narrow(0, 1, 2)  # noqa: E731
        flatten = lambda: x.flatten()  # noqa: E731
        amax = lambda: x.amax()  # noqa: E731
        amax_dim = lambda: x.amax(1)  # noqa: E731
        sum_dim = lambda: x.sum(1)  # noqa: E731
        mean_dim = lambda: x.mean(1)  # noqa: E731

    def setter(key: Any, value: Any) -> Callable[[], None]:
        def run() -> None:
            v[key] = value
        return run

    return {
        "zeros(4)": lambda: lib.zeros(4, dtype=f32) if not is_numpy else np.zeros(4, dtype=np.float32),
        "ones(4, 4)": lambda: lib.ones((4, 4), dtype=f32) if not is_numpy else np.ones((4, 4), dtype=np.float32),
        "empty(4, 4)": lambda: lib.empty((4, 4), dtype=f32) if not is_numpy else np.empty((4, 4), dtype=np.float32),
        "full((4, 4), 2.0)": full,
        "arange(16)": arange,
        "tensor([1., 2., 3., 4.])": t_list,
        "empty_like": empty_like,
        "zeros_like": zeros_like,
        "ones_like": ones_like,
        "x[1]": lambda: x[1],
        "x[-1]": lambda: x[-1],
        "x[1:3]": lambda: x[1:3],
        "x[None]": lambda: x[None],
        "x[..., 1]": lambda: x[..., 1],
        "x[1, 2]": lambda: x[1, 2],
        "x[mask]": lambda: x[mask],
        "x[idx]": lambda: x[idx],
        "x[1] = 0.5": setter(1, 0.5),
        "x[-1] = 0.5": setter(-1, 0.5),
        "x[1:3] = 0.5": setter(slice(1, 3), 0.5),
        "x[None] = 0.5": setter(None, 0.5),
        "x[..., 1] = 0.5": setter((Ellipsis, 1), 0.5),
        "x[mask] = 0.5": setter(mask, 0.5),
        "x[idx] = 0.5": setter(idx, 0.5),
        "view(2, 8)": view,
        "reshape(2, 8)": lambda: x.reshape(2, 8),
        "permute(1, 0)": permute,
        "transpose(0, 1)": transpose,
        "unsqueeze(0)": unsqueeze,
        "squeeze(1)": squeeze,
        "expand(4, 4)": expand,
        "narrow(0, 1, 2)": narrow,
        "flatten()": flatten,
        "a * 2.0": lambda: x * 2.0,
        "2.0 - a": lambda: 2.0 - x,
        "a / 3": lambda: x / 3,
        "sum()": lambda: x.sum(),
        "sum(1)": sum_dim,
        "mean()": lambda: x.mean(),
        "mean(1)": mean_dim,
        "amax()": amax,
        "amax(1)": amax_dim,
    }


def measure(number: int, repeat: int, only: str | None
            ) -> list[tuple[str, float, float | None, float, float | None, float]]:
    """(name, opgen s, torch s or None, numpy s, opgen/torch, opgen/numpy) per row; the ratios are medians
    over rounds in which the libraries ran back to back (paired_rounds)."""
    import generated as G
    torch = _try_torch()
    libs = [cases(G), cases(np, is_numpy=True)] + ([cases(torch)] if torch is not None else [])
    rows = []
    for name in libs[0]:
        if only and only not in name:
            continue
        times, ratios = paired_rounds([lib[name] for lib in libs], number, repeat)
        th, th_ratio = (times[2], 1 / ratios[2]) if torch is not None else (None, None)
        rows.append((name, times[0], th, times[1], th_ratio, 1 / ratios[1]))
    return rows


LARGE_GOAL = 1.05
IMPORT_GOAL = 0.3


def large_cases(n: int) -> dict[str, tuple[Callable[[], object], Callable[[], object]]]:
    """name -> (opgen call, the same NumPy call) on float32 tensors of `n` elements (matmul: n-element
    square matrices)."""
    import generated as G
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    m = a.reshape(-1, 1000) if n % 1000 == 0 else a.reshape(1, -1)
    side = int(n ** 0.5)
    sq1, sq2 = (rng.standard_normal((side, side)).astype(np.float32) for _ in range(2))
    ta, tb, tm, ts1, ts2 = G.tensor(a), G.tensor(b), G.tensor(m), G.tensor(sq1), G.tensor(sq2)

    def np_softmax(x: np.ndarray) -> np.ndarray:
        e = np.exp(x - x.max(axis=1, keepdims=True))
        e /= e.sum(axis=1, keepdims=True)
        return e

    def np_log_softmax(x: np.ndarray) -> np.ndarray:
        z = x - x.max(axis=1, keepdims=True)
        z -= np.log(np.exp(z).sum(axis=1, keepdims=True))
        return z

    return {
        "a + b": (lambda: ta + tb, lambda: a + b),
        "a * 2.0": (lambda: ta * 2.0, lambda: a * np.float32(2.0)),
        "exp(a)": (lambda: G.exp(ta), lambda: np.exp(a)),
        "a.sum()": (lambda: ta.sum(), lambda: a.sum()),
        "m.sum(1)": (lambda: tm.sum(1), lambda: m.sum(axis=1)),
        "m.amax(1)": (lambda: tm.amax(1), lambda: m.max(axis=1)),
        "softmax(m, 1)": (lambda: G.softmax(tm, 1), lambda: np_softmax(m)),
        "log_softmax(m, 1)": (lambda: G.log_softmax(tm, 1), lambda: np_log_softmax(m)),
        "matmul": (lambda: ts1 @ ts2, lambda: sq1 @ sq2),
    }


# Note [Stable large rows]
# A large row's ratio is only as steady as its timing: 20 calls of 15 us per round (what 2e6/n gave at 1e5)
# is a 0.3 ms round, which one scheduler tick on the shared machine skews by 10-20%, and the ratio of two
# medians taken over different moments of a loaded machine moves by as much. Each row is instead timed in
# LARGE_ROUNDS pairs of rounds, an opgen round and a NumPy round back to back (which one goes first
# alternates, so neither always finds the other's data in cache), each about LARGE_ROUND_S long; the row's
# ratio is the median of the pairs' ratios: two rounds a few milliseconds apart see the same machine.
LARGE_ROUND_S = 0.005
LARGE_ROUNDS = 41


def _calls_per_round(fn: Callable[[], object]) -> int:
    """How many calls of `fn` take about LARGE_ROUND_S (from the fastest of three timed calls)."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return max(1, round(LARGE_ROUND_S / max(best, 1e-7)))


def paired_rounds(fns: list[Callable[[], object]], number: int, rounds: int
                  ) -> tuple[list[float], list[float]]:
    """Per-call times of `fns` timed in `rounds` rounds of `number` calls each, the functions back to back
    within a round in an order that rotates from round to round: (median time of each function, median
    over the rounds of each function's time over fns[0]'s) (Note [Stable large rows])."""
    import statistics
    for fn in fns:
        for _ in range(min(number, 1000)):
            fn()
    times: list[list[float]] = [[] for _ in fns]
    order = list(range(len(fns)))
    for r in range(rounds):
        for k in order[r % len(fns):] + order[:r % len(fns)]:
            fn = fns[k]
            start = time.perf_counter()
            for _ in range(number):
                fn()
            times[k].append((time.perf_counter() - start) / number)
    ratios = [statistics.median(t / t0 for t, t0 in zip(ts, times[0], strict=True)) for ts in times]
    return [statistics.median(ts) for ts in times], ratios


def measure_large(n: int, only: str | None) -> list[tuple[str, float, float, float]]:
    """(name, opgen s, numpy s, ratio) per row of `large_cases(n)`."""
    rows = []
    for name, (og, nm) in large_cases(n).items():
        if only and only not in name:
            continue
        nm()
        (t_og, t_nm), (_, np_over_og) = paired_rounds([og, nm], _calls_per_round(nm), LARGE_ROUNDS)
        rows.append((f"{name} n={n:.0e}", t_og, t_nm, 1 / np_over_og))
    return rows


def measure_import(repeat: int) -> tuple[float, float]:
    """Median wall time of `python -c "import generated"` and of `python -c pass`, interleaved.

    With bytecode caching on, as an installed package has it (this machine sets PYTHONDONTWRITEBYTECODE,
    which would time the compilation of every module instead): the caches go to a temporary directory,
    filled by a first, untimed run."""
    import statistics
    import subprocess
    import tempfile
    root = Path(__file__).resolve().parent.parent
    imp, bare = [], []
    with tempfile.TemporaryDirectory(prefix="opgen-pycache-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        subprocess.run([sys.executable, "-c", "import generated"], cwd=root, env=env, check=True)
        for _ in range(repeat):
            for cmd, out in (("import generated", imp), ("pass", bare)):
                start = time.perf_counter()
                subprocess.run([sys.executable, "-c", cmd], cwd=root, env=env, check=True)
                out.append(time.perf_counter() - start)
    return statistics.median(imp), statistics.median(bare)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--number", type=int, default=1000)
    parser.add_argument("--only", help="rows whose name contains this")
    args = parser.parse_args(argv)
    rows = measure(args.number, args.repeat, args.only)
    large = [row for n in (100_000, 1_000_000) for row in measure_large(n, args.only)]
    t_import, t_pass = measure_import(7) if not args.only else (float("nan"), float("nan"))
    print(f"{'call':<26} {'opgen us':>9} {'torch us':>9} {'numpy us':>9} {'/torch':>7} {'/numpy':>7}")
    for name, og, th, nm, r_th, r_np in rows:
        th_s = f"{th * 1e6:9.2f}" if th is not None else f"{'-':>9}"
        ratio = f"{r_th:7.2f}" if r_th is not None else f"{'-':>7}"
        print(f"{name:<26} {og * 1e6:9.2f} {th_s} {nm * 1e6:9.2f} {ratio} {r_np:7.2f}")
    print(f"\n{'large (float32)':<26} {'opgen ms':>9} {'numpy ms':>9} {'/numpy':>7}")
    for name, og, nm, ratio in large:
        print(f"{name:<26} {og * 1e3:9.3f} {nm * 1e3:9.3f} {ratio:7.2f}")
    print(f"\npython -c 'import generated': {t_import:.3f} s; python -c pass: {t_pass:.3f} s")
    print(f"\n(goal <= {GOAL} of PyTorch; the issue aims at {AIM})")
    print(f"{'figure':<40}  {'value':>6}  {'goal':>6}  {'ok':>3}")
    for name, _, _, _, r_th, r_np in rows:
        if r_th is None:
            print(f"{name + ' / numpy':<40}  {r_np:>6.2f}  {'-':>6}  {'-':>3}")
        else:
            ok = "yes" if r_th <= GOAL else "NO"
            print(f"{name + ' / torch':<40}  {r_th:>6.2f}  {'<= ' + str(GOAL):>6}  {ok:>3}")
    for name, _, _, ratio in large:
        ok = "yes" if ratio <= LARGE_GOAL else "NO"
        print(f"{name + ' / numpy':<40}  {ratio:>6.2f}  {'<= ' + str(LARGE_GOAL):>6}  {ok:>3}")
    if t_import == t_import:
        ok = "yes" if t_import < IMPORT_GOAL else "NO"
        print(f"{'import generated s (python -c pass ' + format(t_pass, '.3f') + ')':<40}  {t_import:>6.3f}  "
              f"{'< ' + str(IMPORT_GOAL):>6}  {ok:>3}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
