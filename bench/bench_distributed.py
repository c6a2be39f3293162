"""DistributedDataParallel on this machine: scaling efficiency of a compute-bound model on 2 ranks against
1 rank (time per sample), and the fraction of the gradient all-reduce time hidden behind backward.

    OPENBLAS_NUM_THREADS=1 python3 bench/bench_distributed.py [--steps 30]

Each rank trains an MLP 1024-1024-1024-10 on 64 samples a step with one BLAS thread; the 2-rank job
processes twice the samples per step. efficiency = (1-rank time per sample) / (2 x 2-rank time per sample
per rank) = throughput(2) / (2 x throughput(1)); hidden = 1 - (time backward waited for all-reduces) /
(time the all-reduces took). Goal: efficiency >= 0.8 where the machine has 2 free cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def worker(steps: int) -> None:
    import generated as G

    dist = G.distributed

    dist.init_process_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    G.manual_seed(0)
    nn = G.nn
    model = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
    ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=4)
    opt = G.optim.SGD(ddp.parameters(), lr=1e-3)
    x, y = G.randn(64, 1024), G.randint(0, 10, (64,))
    for step in range(steps + 3):
        if step == 3:  # warm-up done
            dist.barrier()
            start = time.perf_counter()
            ddp.reducer.comm_seconds = ddp.reducer.exposed_seconds = 0.0
        loss = nn.functional.cross_entropy(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.barrier()
    seconds = time.perf_counter() - start
    if rank == 0:
        print(json.dumps({"world": world, "seconds": seconds, "samples": steps * 64 * world,
                          "comm": ddp.reducer.comm_seconds, "exposed": ddp.reducer.exposed_seconds}))
    dist.destroy_process_group()


def run(nproc: int, steps: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-m", "generated.distributed.run", "--nproc-per-node", str(nproc),
                          __file__, "--worker", "--steps", str(steps)], cwd=ROOT, env=env, capture_output=True,
                         text=True, check=True).stdout
    return json.loads([line for line in out.splitlines() if line.startswith("{")][-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--worker", action="store_true")
    args = parser.parse_args()
    if args.worker:
        worker(args.steps)
        return
    one, two = run(1, args.steps), run(2, args.steps)
    per_sample_1 = one["seconds"] / one["samples"]
    per_sample_2 = two["seconds"] / two["samples"]
    efficiency = per_sample_1 / (2 * per_sample_2)
    hidden = 1 - two["exposed"] / two["comm"] if two["comm"] else 0.0
    print(f"{'figure':<58} {'value':>10}  goal")
    print(f"{'1 rank: ms per step (64 samples)':<58} {1e3 * one['seconds'] / args.steps:>10.2f}")
    print(f"{'2 ranks: ms per step (2 x 64 samples)':<58} {1e3 * two['seconds'] / args.steps:>10.2f}")
    print(f"{'scaling efficiency, 2 ranks / 1 rank (time per sample)':<58} {efficiency:>10.2f}  >= 0.8")
    print(f"{'all-reduce time hidden behind backward (2 ranks)':<58} {hidden:>10.2f}")


if __name__ == "__main__":
    main()
