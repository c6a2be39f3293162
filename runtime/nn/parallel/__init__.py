"""`G.nn.parallel`: DistributedDataParallel (data parallelism across processes, over runtime/distributed)."""

from runtime.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
