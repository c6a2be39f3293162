"""Benchmark: the training demo on CPU (demo/train.py with its defaults), its accuracy and wall time.

    python bench/bench_demo.py [--epochs N]

Figures: the final test accuracy (goal >= the demo's stated target for its model) and the wall time of the whole run,
data generation included (goal < 180 s on a 2-core CPU, the issue's budget; aim 30-60 s).
Prints the table `figure value goal ok`.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TIME_GOAL_S = 180.0


def main(argv: list[str] | None = None) -> int:
    from demo.train import TARGET_ACCURACY, train

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=None, help="default: the demo's own")
    args = parser.parse_args(argv)
    log = io.StringIO()
    kwargs = {} if args.epochs is None else {"epochs": args.epochs}
    result = train(device="cpu", stream=log, **kwargs)
    print(log.getvalue().rstrip())
    target = TARGET_ACCURACY[result.model]
    rows = [
        (f"demo test accuracy, {result.model} (%)", f"{result.test_accuracy:.1f}", f">= {target:g}",
         result.test_accuracy >= target),
        ("demo CPU wall time (s)", f"{result.seconds:.1f}", f"< {TIME_GOAL_S:g}", result.seconds < TIME_GOAL_S),
    ]
    print()
    print(f"{'figure':<36}  {'value':>8}  {'goal':>7}  ok")
    for figure, value, goal, ok in rows:
        print(f"{figure:<36}  {value:>8}  {goal:>7}  {'yes' if ok else 'NO'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
