"""`G.nn.parallel`: DistributedDataParallel (data parallelism across processes, over runtime/distributed) and
DataParallel (one device: it calls the module)."""

from runtime.nn.parallel.data_parallel import Container, DataParallel, factory_kwargs
from runtime.nn.parallel.distributed import DistributedDataParallel

__all__ = ["Container", "DataParallel", "DistributedDataParallel", "factory_kwargs"]
