"""Benchmark: one training step of a 2-layer MLP, opgen autograd vs. hand-written NumPy.

    loss = ((x @ W1 + b1).relu() @ W2 + b2).mul(y).sum()      x 32x64, W1 64x64, W2 64x10, float32, CPU

One step = forward + backward with the parameters' grads reset (set to None) first. Prints the time of
a step in opgen, in NumPy (forward and manual backward), their ratio (goal: <= 5.0), and the same ratio
for PyTorch when it is installed. Run: `python bench/bench_autograd.py [--repeat N]`.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

N, D_IN, HIDDEN, D_OUT = 32, 64, 64, 10


def make_data(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    f32 = np.float32
    return {
        "x": rng.standard_normal((N, D_IN)).astype(f32),
        "W1": (rng.standard_normal((D_IN, HIDDEN)) * 0.1).astype(f32),
        "b1": (rng.standard_normal(HIDDEN) * 0.1).astype(f32),
        "W2": (rng.standard_normal((HIDDEN, D_OUT)) * 0.1).astype(f32),
        "b2": (rng.standard_normal(D_OUT) * 0.1).astype(f32),
        "y": rng.standard_normal((N, D_OUT)).astype(f32),
    }


def numpy_step(d: dict[str, np.ndarray]) -> Callable[[], tuple[np.ndarray, ...]]:
    x, W1, b1, W2, b2, y = d["x"], d["W1"], d["b1"], d["W2"], d["b2"], d["y"]

    def step() -> tuple[np.ndarray, ...]:
        h = x @ W1 + b1
        a = np.maximum(h, 0)
        o = a @ W2 + b2
        loss = (o * y).sum()
        go = y  # d loss / d o
        gW2 = a.T @ go
        gb2 = go.sum(axis=0)
        ga = go @ W2.T
        gh = ga * (h > 0)
        gW1 = x.T @ gh
        gb1 = gh.sum(axis=0)
        return loss, gW1, gb1, gW2, gb2

    return step


def opgen_step(d: dict[str, np.ndarray]) -> tuple[Callable[[], object], list[object]]:
    import generated as G
    x, y = G.tensor(d["x"]), G.tensor(d["y"])
    params = [G.tensor(d[k], requires_grad=True) for k in ("W1", "b1", "W2", "b2")]
    W1, b1, W2, b2 = params

    def step() -> object:
        for p in params:
            p.grad = None
        loss = ((x @ W1 + b1).relu() @ W2 + b2).mul(y).sum()
        loss.backward()
        return loss

    return step, params


def torch_step(d: dict[str, np.ndarray]) -> Callable[[], object] | None:
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    x, y = torch.from_numpy(d["x"]), torch.from_numpy(d["y"])
    params = [torch.from_numpy(d[k].copy()).requires_grad_() for k in ("W1", "b1", "W2", "b2")]
    W1, b1, W2, b2 = params

    def step() -> object:
        for p in params:
            p.grad = None
        loss = ((x @ W1 + b1).relu() @ W2 + b2).mul(y).sum()
        loss.backward()
        return loss

    return step


def best_times(fns: list[Callable[[], object]], repeat: int, number: int) -> list[float]:
    """Best mean time of one call (seconds) of each function, over `repeat` rounds of `number` calls.

    The rounds of the functions are interleaved, so that a busy machine slows them alike and the ratio
    stays meaningful."""
    for fn in fns:
        for _ in range(max(number // 10, 3)):
            fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            best[i] = min(best[i], (time.perf_counter() - t0) / number)
    return best


def check(d: dict[str, np.ndarray]) -> None:
    """The opgen gradients must match the NumPy ones before any timing is reported."""
    ref = numpy_step(d)()
    step, params = opgen_step(d)
    loss = step()
    np.testing.assert_allclose(float(loss.item()), float(ref[0]), rtol=1e-4)
    for p, g in zip(params, ref[1:], strict=True):
        np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-4, atol=1e-4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--number", type=int, default=200)
    args = parser.parse_args()
    d = make_data()
    check(d)
    steps = [numpy_step(d), opgen_step(d)[0]]
    ts = torch_step(d)
    if ts is not None:
        steps.append(ts)
    times = best_times(steps, args.repeat, args.number)
    t_np, t_og = times[0], times[1]
    print(f"numpy  step: {t_np * 1e6:8.1f} us")
    print(f"opgen  step: {t_og * 1e6:8.1f} us")
    print(f"opgen / numpy ratio: {t_og / t_np:.2f} (goal <= 5.0)")
    if ts is not None:
        print(f"torch  step: {times[2] * 1e6:8.1f} us")
        print(f"torch / numpy ratio: {times[2] / t_np:.2f}")
    else:
        print("torch: not installed (no PyTorch ratio)")


if __name__ == "__main__":
    main()
