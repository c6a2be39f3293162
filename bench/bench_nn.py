"""Benchmark: layer_norm forward + backward, opgen vs. hand-written NumPy, fused kernel vs. composition.

    y = layer_norm(x, [256], w, b); (y * g).sum().backward()        x 64x256, float32, CPU

Prints the time of one step with opgen's fused native_layer_norm (and its derivative), with the same
layer norm composed of ops (mean, var, rsqrt, mul, add: what autograd records without the hand kernel),
and with NumPy (forward and manual backward), and the ratios fused/NumPy and composed/fused, all measured
in this run (best of --repeat rounds). Run: `python bench/bench_nn.py [--repeat N]`.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

N, D = 64, 256


def best_time(fn: Callable[[], object], repeat: int, number: int = 50) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t) / number)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    import generated as G
    from runtime.kernels.normalization import _normalize
    rng = np.random.default_rng(0)
    xn = rng.standard_normal((N, D)).astype(np.float32)
    wn, bn, gn = (rng.standard_normal(D).astype(np.float32) for _ in range(3))
    gnn = rng.standard_normal((N, D)).astype(np.float32)
    x = G.tensor(xn, requires_grad=True)
    w, b = G.tensor(wn, requires_grad=True), G.tensor(bn, requires_grad=True)
    g = G.tensor(gnn)

    def fused() -> None:
        x.grad = w.grad = b.grad = None
        (G.layer_norm(x, [D], w, b) * g).sum().backward()

    def composed() -> None:
        x.grad = w.grad = b.grad = None
        mean = G.mean(x, [1], keepdim=True)
        var = G.var(x, [1], correction=0, keepdim=True)
        ((_normalize(x, mean, var, 1e-5) * w + b) * g).sum().backward()

    def numpy_step() -> tuple[np.ndarray, ...]:
        mean = xn.mean(1, keepdims=True)
        rstd = 1 / np.sqrt(xn.var(1, keepdims=True) + np.float32(1e-5))
        xhat = (xn - mean) * rstd
        y = xhat * wn + bn
        float((y * gnn).sum())
        gw = gnn * wn
        dx = rstd * (gw - gw.mean(1, keepdims=True) - xhat * (gw * xhat).mean(1, keepdims=True))
        return dx, (gnn * xhat).sum(0), gnn.sum(0)

    t_np, t_fused, t_comp = (best_time(f, args.repeat) for f in (numpy_step, fused, composed))
    print(f"layer_norm fwd+bwd {N}x{D}: opgen fused {t_fused * 1e6:.0f} us, composed {t_comp * 1e6:.0f} us, "
          f"NumPy {t_np * 1e6:.0f} us")
    print(f"fused / NumPy: {t_fused / t_np:.2f}x   composed / fused: {t_comp / t_fused:.2f}x")


if __name__ == "__main__":
    main()
