"""Benchmark: the CNN layers alone, forward + backward, opgen vs. PyTorch on the CPU (one thread each).

Each row is one layer, batch 64, float32: `y = layer(x); y.backward(g)` with the gradients PyTorch would
compute in the model (the first convolution's input needs none). The first eight are the layers of the
training benchmarks' models (bench/bench_training.py: cnn and demo); the rest cover the general geometry
(stride, dilation, groups, padded overlapping pooling). opgen runs twice: with its C++ conv/pool kernels
(Note [Compiled convolution and pooling kernels], runtime/kernels/conv_pool_cpp.py; the benchmark waits for
their build first) and on its NumPy paths (`numpy`). The three are timed in interleaved rounds; the figures
are the medians over the rounds of opgen's time over PyTorch's (goal <= 1.0) and of the C++ over the NumPy
time; `--cpu-time` as in bench/bench_training.py. Run:
`python bench/bench_conv.py [--rounds N] [--only SUBSTR] [--cpu-time]`; `--demo N` times the demo's training
loop instead (bench/bench_compile.py `demo_rows`) on the NumPy paths and the C++ kernels, N times each.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as PyTorch is given one (see bench_training.py)
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_training import clock_of, time_rounds, torch_one_thread

GOAL = 1.0
# name -> (kind, input shape, output channels (conv) or kernel (pool), whether the input needs a gradient,
# stride, padding, dilation, groups); the conv kernels are 3x3
LAYERS: dict[str, tuple[Any, ...]] = {
    "cnn conv1 1->8 28x28": ("conv", (64, 1, 28, 28), 8, False),
    "cnn pool1 8x28x28": ("pool", (64, 8, 28, 28), 2, True),
    "cnn conv2 8->16 14x14": ("conv", (64, 8, 14, 14), 16, True),
    "cnn pool2 16x14x14": ("pool", (64, 16, 14, 14), 2, True),
    "demo conv1 1->16 12x12": ("conv", (64, 1, 12, 12), 16, False),
    "demo pool1 16x12x12": ("pool", (64, 16, 12, 12), 2, True),
    "demo conv2 16->32 6x6": ("conv", (64, 16, 6, 6), 32, True),
    "demo pool2 32x6x6": ("pool", (64, 32, 6, 6), 2, True),
    "conv 32->64 16x16 stride 2": ("conv", (64, 32, 16, 16), 64, True, 2, 1, 1, 1),
    "conv 16->16 12x12 dilated 2": ("conv", (64, 16, 12, 12), 16, True, 1, 2, 2, 1),
    "conv 32->32 10x10 groups 32": ("conv", (64, 32, 10, 10), 32, True, 1, 1, 1, 32),
    "pool 3x3 s2 p1 32x16x16": ("pool", (64, 32, 16, 16), 3, True, 2, 1),
}


def make(lib: Any, name: str) -> Callable[[], object]:
    """One forward + backward of layer `name` in `lib` (generated or torch)."""
    kind, shape, arg, input_grad, *geometry = LAYERS[name]
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal(shape).astype(np.float32)
    tensor = lib.tensor if lib.__name__ == "generated" else lib.from_numpy
    x = tensor(x_np)
    if input_grad:
        x.requires_grad_(True)
    F = lib.nn.functional
    if kind == "conv":
        stride, padding, dilation, groups = geometry or (1, 1, 1, 1)
        w = tensor((rng.standard_normal((arg, shape[1] // groups, 3, 3)) * 0.1).astype(np.float32))
        w.requires_grad_(True)
        b = tensor(np.zeros(arg, np.float32)).requires_grad_(True)

        def layer() -> Any:
            return F.conv2d(x, w, b, stride, padding, dilation, groups)
    else:
        stride, padding = geometry or (arg, 0)

        def layer() -> Any:
            return F.max_pool2d(x, arg, stride, padding)
    g = tensor(rng.standard_normal(tuple(layer().shape)).astype(np.float32))

    def step() -> object:
        y = layer()
        y.backward(g)
        return y

    return step


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--seconds", type=float, default=0.1, help="length of one round of one library")
    parser.add_argument("--only", help="layers whose name contains this")
    parser.add_argument("--cpu-time", action="store_true", help="time by this thread's CPU clock")
    parser.add_argument("--demo", type=int, default=0, metavar="N",
                        help="instead, N runs of the demo's training loop (bench/bench_compile.py demo_rows) with "
                             "and without the C++ kernels")
    args = parser.parse_args(argv)
    import generated as G
    torch = torch_one_thread()
    if torch is None:
        return 0
    from runtime.kernels import conv_pool_cpp
    state = conv_pool_cpp.wait()
    print(f"opgen's C++ conv/pool kernels: {state}")
    if args.demo:
        return demo(G, args.demo, args.cpu_time)

    def numpy_path(step: Callable[[], object]) -> Callable[[], object]:
        def run() -> object:
            with conv_pool_cpp.numpy_only():
                return step()
        return run

    print(f"{'layer (fwd+bwd, batch 64)':<30} {'opgen ms':>9} {'numpy ms':>9} {'torch ms':>9} {'ratio':>6} "
          f"{'range':>9} {'C++/numpy':>9}")
    figures = []
    for name in LAYERS:
        if args.only and args.only not in name:
            continue
        fns = [make(G, name), numpy_path(make(G, name)), make(torch, name)]
        samples = time_rounds(fns, args.rounds, args.seconds, clock_of(args.cpu_time))
        ratios = sorted(a / b for a, b in zip(samples[0], samples[2], strict=True))
        ratio = statistics.median(ratios)
        gain = statistics.median(a / b for a, b in zip(samples[0], samples[1], strict=True))
        figures.append((name, ratio))
        ms = [statistics.median(s) * 1e3 for s in samples]
        print(f"{name:<30} {ms[0]:9.3f} {ms[1]:9.3f} {ms[2]:9.3f} {ratio:6.2f} {ratios[0]:.2f}-{ratios[-1]:.2f} "
              f"{gain:9.2f}")
    print(f"\n{'figure':<42}  {'value':>6}  {'goal':>6}  {'ok':>3}")
    for name, ratio in figures:
        print(f"{name + ' / torch':<42}  {ratio:>6.2f}  {'<= ' + str(GOAL):>6}  {'yes' if ratio <= GOAL else 'NO':>3}")
    return 0
    print(f"{'layer (fwd+bwd, batch 64)':<28} {'opgen ms':>9} {'torch ms':>9} {'ratio':>6}  range")
    figures = []
    for name in LAYERS:
        if args.only and args.only not in name:
            continue
        samples = time_rounds([make(G, name), make(torch, name)], args.rounds, args.seconds, clock_of(args.cpu_time))
        ratios = sorted(a / b for a, b in zip(samples[0], samples[1], strict=True))
        ratio = statistics.median(ratios)
        figures.append((name, ratio))
        print(f"{name:<28} {statistics.median(samples[0]) * 1e3:9.3f} {statistics.median(samples[1]) * 1e3:9.3f} "
              f"{ratio:6.2f}  {ratios[0]:.2f}-{ratios[-1]:.2f}")
    print(f"\n{'figure':<40}  {'value':>6}  {'goal':>6}  {'ok':>3}")
    for name, ratio in figures:
        print(f"{name + ' / torch':<40}  {ratio:>6.2f}  {'<= ' + str(GOAL):>6}  {'yes' if ratio <= GOAL else 'NO':>3}")
    return 0


def demo(G: Any, runs: int, cpu_time: bool) -> int:
    """The demo's training loop per batch (eager, step compiled, PyTorch eager), on opgen's NumPy conv/pool
    paths and on its C++ kernels, alternating, `runs` times each; with `cpu_time`, demo_rows's median of
    rounds is taken by this thread's CPU clock."""
    from bench import bench_compile
    from bench.bench_compile import demo_rows
    from runtime.kernels import conv_pool_cpp

    if cpu_time:
        clock = clock_of(True)

        def best(fn: Callable[[], object], rounds: int = 15) -> float:
            fn()
            times = []
            for _ in range(rounds):
                start = clock()
                fn()
                times.append(clock() - start)
            return statistics.median(times)
        bench_compile.best = best

    print(f"{'conv/pool':<9} {'eager ms':>9} {'compiled ms':>11} {'torch ms':>9} {'eager/torch':>11} "
          f"{'compiled/torch':>14}")
    for _ in range(runs):
        for kind in ("numpy", "C++"):
            if kind == "numpy":
                with conv_pool_cpp.numpy_only():
                    rows = demo_rows(G, 10, 9)
            else:
                rows = demo_rows(G, 10, 9)
            eager, compiled, t = (rows[k] for k in ("opgen eager", "opgen step compiled", "PyTorch eager"))
            print(f"{kind:<9} {eager * 1e3:9.2f} {compiled * 1e3:11.2f} {t * 1e3:9.2f} {eager / t:11.2f} "
                  f"{compiled / t:14.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
