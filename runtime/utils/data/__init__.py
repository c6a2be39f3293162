"""`G.utils.data` (torch.utils.data): datasets, samplers, collation and the DataLoader, in PyTorch's modules:
dataset.py, sampler.py, dataloader.py (Note [DataLoader workers]), _utils/collate.py, _utils/worker.py,
_utils/fetch.py; DataPipes in datapipes/ (Note [DataPipes]) with graph.py and graph_settings.py."""

from runtime.distributed.sampler import DistributedSampler
from runtime.utils.data._utils.collate import default_collate, default_convert
from runtime.utils.data._utils.worker import WorkerInfo, get_worker_info
from runtime.utils.data.dataloader import DataLoader, _DatasetKind
from runtime.utils.data.datapipes._decorator import (
    argument_validation,
    functional_datapipe,
    guaranteed_datapipes_determinism,
    non_deterministic,
    runtime_validation,
    runtime_validation_disabled,
)
from runtime.utils.data.datapipes.datapipe import DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe
from runtime.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from runtime.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset",
           "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler",
           "TensorDataset", "WeightedRandomSampler", "WorkerInfo", "default_collate", "default_convert",
           "get_worker_info", "random_split"]
__all__ += ["DistributedSampler"]
__all__ += ["DFIterDataPipe", "DataChunk", "IterDataPipe", "MapDataPipe", "_DatasetKind", "argument_validation",
            "functional_datapipe", "guaranteed_datapipes_determinism", "non_deterministic", "runtime_validation",
            "runtime_validation_disabled"]
