"""Record the training demo's tensor allocations as an allocator trace (bench/traces/demo_trace.json).

Every buffer that backs a tensor during a short demo run is logged when it is created and when it is
freed, in order: ("malloc", id, nbytes, stream) and ("free", id). bench_allocator.py replays the trace
through the caching allocator on a simulated device to measure fragmentation. The sizes and lifetimes
are those of the CPU run; a CUDA run allocates the same tensors (plus CuPy temporaries, not recorded).

    python bench/record_demo_trace.py [--epochs 1] [--train-size 2000]
"""

from __future__ import annotations

import argparse
import itertools
import weakref
from pathlib import Path
from typing import Any

from bench_allocator import DEFAULT_TRACE, save_trace

from runtime.storage import root_array
from runtime.tensor import Tensor


def record(epochs: int, train_size: int) -> list[tuple]:
    from demo.train import train

    trace: list[tuple] = []
    live: dict[int, Any] = {}   # id(root array) -> its finalizer, while the buffer is alive
    ids = itertools.count()
    original = Tensor._wrap

    def on_free(key: int, event_id: int) -> None:
        live.pop(key, None)
        trace.append(("free", event_id))

    def wrap(array: Any, dtype: Any = None) -> Tensor:
        root = root_array(array)
        key = id(root)
        if key not in live and root.nbytes > 0:
            event_id = next(ids)
            trace.append(("malloc", event_id, int(root.nbytes), 0))
            live[key] = weakref.finalize(root, on_free, key, event_id)
        return original(array, dtype)

    Tensor._wrap = staticmethod(wrap)  # type: ignore[method-assign]
    try:
        train(epochs=epochs, seed=0, device="cpu", train_size=train_size)
    finally:
        Tensor._wrap = staticmethod(original)  # type: ignore[method-assign]
    for finalizer in list(live.values()):
        finalizer()  # whatever is still alive is freed at the end of the run
    return trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--train-size", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=DEFAULT_TRACE)
    args = parser.parse_args()
    trace = record(args.epochs, args.train_size)
    save_trace(trace, args.out)
    mallocs = sum(1 for e in trace if e[0] == "malloc")
    print(f"recorded {len(trace)} events ({mallocs} allocations) to {args.out}")


if __name__ == "__main__":
    main()
