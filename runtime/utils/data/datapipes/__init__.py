"""DataPipes (torch.utils.data.datapipes; Note [DataPipes] in datapipe.py): datapipe.py (the base classes),
_decorator.py (functional_datapipe and the checks), _typing.py (element types), iter/ and map/ (the pipes)."""

from runtime.utils.data.datapipes import iter, map
from runtime.utils.data.datapipes.datapipe import DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe

__all__ = ["DFIterDataPipe", "DataChunk", "IterDataPipe", "MapDataPipe", "iter", "map"]
