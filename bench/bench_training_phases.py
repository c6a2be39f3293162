"""Benchmark: the phases of one training step (zero_grad, forward + loss, backward, optimizer step) in opgen
and in PyTorch, for the models of bench/bench_training.py, to show where a step's time goes.

Each library runs `--steps` steps per round in interleaved rounds; a phase's figure is its 10th-percentile
time over the steps of the best round (a shared machine's pauses fall into the slow steps), with opgen's time
over PyTorch's. The optimizer is SGD(momentum 0.9), or Adam for `demo`, as in bench_training.py. Without
PyTorch the script says so and prints no ratio. The final table (read by bench/run_all.py) lists each
phase's ratio without a goal: the goals are the whole steps' in bench_training.py.
Run: `python bench/bench_training_phases.py [--only NAME] [--rounds N] [--steps N]`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as bench_training.py: one BLAS thread, as PyTorch's
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_training import INPUTS, MODELS, build, torch_one_thread

PHASES = ("zero_grad", "forward", "backward", "step")


def phase_times(lib: Any, name: str, x: np.ndarray, y: np.ndarray, steps: int) -> list[float]:
    """10th-percentile seconds of each phase over `steps` steps (after 10 warm-up steps)."""
    if lib.__name__ == "generated":
        from demo.train import build_model
        model = build_model("cnn", 12) if name == "demo" else build(lib, name)
        xt, yt = lib.tensor(x), lib.tensor(y)
    else:
        model = build(lib, name)
        xt, yt = lib.from_numpy(x), lib.from_numpy(y)
    opt = (lib.optim.Adam(model.parameters(), lr=3e-3) if name == "demo"
           else lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9))
    F = lib.nn.functional
    samples: list[list[float]] = [[] for _ in PHASES]
    for i in range(steps + 10):
        t0 = time.perf_counter()
        opt.zero_grad()
        t1 = time.perf_counter()
        loss = F.cross_entropy(model(xt), yt)
        t2 = time.perf_counter()
        loss.backward()
        t3 = time.perf_counter()
        opt.step()
        t4 = time.perf_counter()
        if i >= 10:
            for out, d in zip(samples, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
                out.append(d)
    return [sorted(s)[len(s) // 10] for s in samples]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--only", help="models whose name contains this")
    args = parser.parse_args(argv)
    import generated as G
    torch = torch_one_thread()
    if torch is None:
        return 0
    print(f"{'model':16s} {'phase':10s} {'opgen us':>9s} {'torch us':>9s} {'ratio':>6s}")
    figures = []
    for name in MODELS:
        if args.only and args.only not in name:
            continue
        batch, shape = INPUTS[name]
        rng = np.random.default_rng(0)
        x = rng.standard_normal((batch, *shape)).astype(np.float32)
        y = rng.integers(0, 10, batch)
        ours: list[list[float]] = []
        theirs: list[list[float]] = []
        for _ in range(args.rounds):
            ours.append(phase_times(G, name, x, y, args.steps))
            theirs.append(phase_times(torch, name, x, y, args.steps))
        best_ours = [min(r[k] for r in ours) for k in range(len(PHASES))]
        best_theirs = [min(r[k] for r in theirs) for k in range(len(PHASES))]
        for phase, a, b in zip((*PHASES, "total"), (*best_ours, sum(best_ours)), (*best_theirs, sum(best_theirs)),
                               strict=True):
            print(f"{name:16s} {phase:10s} {a * 1e6:9.1f} {b * 1e6:9.1f} {a / b:6.2f}")
            if phase != "total":
                figures.append((f"{phase} {name} / torch", f"{a / b:.2f}"))
    print(f"\n{'figure':42s} {'value':>6s}  goal  ok")
    for figure, value in figures:
        print(f"{figure:42s} {value:>6s}  -     -")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
