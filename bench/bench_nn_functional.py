"""The nn.functional compositions of issue 21 (3-D and 1-D convolution and pooling, transposed convolution,
interpolation, padding) against PyTorch on the CPU, one thread each, measured in this run.

    python bench/bench_nn_functional.py

Prints a `figure value goal ok` table; a value is opgen's time over PyTorch's (lower is better). There is no
goal: the figures track the cost of building these from the 2-D convolution and gather ops.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _best(fn: Callable[[], Any], repeat: int = 5) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: no figures (the oracle extra)")
        return 0
    import generated as G

    torch.set_num_threads(1)
    F, TF = G.nn.functional, torch.nn.functional
    rng = np.random.default_rng(0)

    def r(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    cases = [
        ("conv1d k5", lambda f, x, w: f.conv1d(x, w, padding=2), (r(16, 32, 512), r(64, 32, 5))),
        ("conv3d k3", lambda f, x, w: f.conv3d(x, w, padding=1), (r(2, 8, 8, 32, 32), r(16, 8, 3, 3, 3))),
        ("conv_transpose2d s2", lambda f, x, w: f.conv_transpose2d(x, w, stride=2), (r(8, 32, 16, 16),
                                                                                       r(32, 16, 4, 4))),
        ("max_pool3d 2", lambda f, x: f.max_pool3d(x, 2), (r(4, 16, 8, 32, 32),)),
        ("avg_pool3d 3/2 pad 1", lambda f, x: f.avg_pool3d(x, 3, 2, 1), (r(4, 16, 8, 32, 32),)),
        ("adaptive_max_pool2d 7", lambda f, x: f.adaptive_max_pool2d(x, 7), (r(8, 64, 28, 28),)),
        ("interpolate bilinear x2", lambda f, x: f.interpolate(x, scale_factor=2, mode="bilinear"),
         (r(4, 3, 128, 128),)),
        ("pad reflect 3", lambda f, x: f.pad(x, (3, 3, 3, 3), "reflect"), (r(8, 32, 64, 64),)),
    ]
    print(f"{'figure':<44}  {'value':>8}  goal  ok")
    for name, fn, arrays in cases:
        ours = [G.tensor(a) for a in arrays]
        theirs = [torch.tensor(a) for a in arrays]
        ratio = _best(lambda f=fn, a=ours: f(F, *a)) / _best(lambda f=fn, a=theirs: f(TF, *a))
        print(f"{name + ' (opgen / torch time)':<44}  {ratio:>7.2f}x  -     -")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
