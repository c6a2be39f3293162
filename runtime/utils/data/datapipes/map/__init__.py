"""The MapDataPipes (torch.utils.data.datapipes.map), under PyTorch's short names; importing them registers
their functional forms (Note [DataPipes])."""

from runtime.utils.data.datapipes.map.pipes import BatcherMapDataPipe as Batcher
from runtime.utils.data.datapipes.map.pipes import ConcaterMapDataPipe as Concater
from runtime.utils.data.datapipes.map.pipes import MapperMapDataPipe as Mapper
from runtime.utils.data.datapipes.map.pipes import SequenceWrapperMapDataPipe as SequenceWrapper
from runtime.utils.data.datapipes.map.pipes import ShufflerIterDataPipe as Shuffler
from runtime.utils.data.datapipes.map.pipes import ZipperMapDataPipe as Zipper

__all__ = ["Batcher", "Concater", "Mapper", "SequenceWrapper", "Shuffler", "Zipper"]
