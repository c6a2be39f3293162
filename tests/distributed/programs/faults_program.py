"""Faults a distributed job must report, one per `case` argument (run under the launcher)."""

import os
import signal
import sys
import time
from datetime import timedelta

import generated.distributed as dist

import generated as G

case = sys.argv[1]
dist.init_process_group(timeout=timedelta(seconds=float(os.environ.get("FAULT_TIMEOUT", "3"))))
r = dist.get_rank()
if case == "hang":  # rank 1 never joins the all_reduce
    if r == 1:
        time.sleep(60)
    dist.all_reduce(G.ones(3))
elif case == "kill":  # rank 1 dies before the all_reduce
    if r == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    dist.all_reduce(G.ones(3))
elif case == "mismatch":  # ranks pass different shapes and dtypes (checked in debug mode)
    t = G.ones(4) if r == 0 else G.ones(5, dtype=G.float64)
    try:
        dist.all_reduce(t)
    except RuntimeError as e:
        print(f"rank {r} refused: {e}")
        sys.exit(0)
    sys.exit(3)
elif case == "uneven":  # DDP where rank 1 has fewer batches than rank 0
    model = G.nn.parallel.DistributedDataParallel(G.nn.Linear(2, 1))
    for _ in range(3 if r == 0 else 2):
        model(G.ones(4, 2)).sum().backward()
    dist.destroy_process_group()
print(f"rank {r}: case {case} ended without an error")
