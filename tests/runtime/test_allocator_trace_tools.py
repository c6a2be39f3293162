"""The allocator benchmark's trace tools: record, save, load and replay a training trace."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from runtime.cuda.allocator import CachingAllocator
from runtime.cuda.simulated import SimulatedDevice

_BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_allocator.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_allocator", _BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_trace_round_trip_and_replay(tmp_path: Path) -> None:
    bench = _bench()
    trace = bench.synthetic_mlp_trace(steps=3)
    mallocs = [e for e in trace if e[0] == "malloc"]
    assert len(mallocs) == len([e for e in trace if e[0] == "free"])  # everything is freed at the end
    path = tmp_path / "trace.json"
    bench.save_trace(trace, path)
    assert bench.load_trace(path) == trace
    alloc = CachingAllocator(SimulatedDevice(1 << 40))
    bench.replay(trace, alloc)
    alloc.check_invariants()
    assert alloc.stats()["allocated_bytes.all.current"] == 0
    ratio, _ = bench.fragmentation(trace)
    assert 1.0 <= ratio < 1.5
