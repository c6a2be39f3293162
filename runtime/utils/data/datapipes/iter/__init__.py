"""The IterDataPipes (torch.utils.data.datapipes.iter), under PyTorch's short names; importing them
registers their functional forms (`pipe.map(f)`, Note [DataPipes])."""

from runtime.utils.data.datapipes.iter.callable import CollatorIterDataPipe as Collator
from runtime.utils.data.datapipes.iter.callable import MapperIterDataPipe as Mapper
from runtime.utils.data.datapipes.iter.combinatorics import SamplerIterDataPipe as Sampler
from runtime.utils.data.datapipes.iter.combinatorics import ShufflerIterDataPipe as Shuffler
from runtime.utils.data.datapipes.iter.combining import ConcaterIterDataPipe as Concater
from runtime.utils.data.datapipes.iter.combining import DemultiplexerIterDataPipe as Demultiplexer
from runtime.utils.data.datapipes.iter.combining import ForkerIterDataPipe as Forker
from runtime.utils.data.datapipes.iter.combining import MultiplexerIterDataPipe as Multiplexer
from runtime.utils.data.datapipes.iter.combining import ZipperIterDataPipe as Zipper
from runtime.utils.data.datapipes.iter.files import FileListerIterDataPipe as FileLister
from runtime.utils.data.datapipes.iter.files import FileOpenerIterDataPipe as FileOpener
from runtime.utils.data.datapipes.iter.files import StreamReaderIterDataPipe as StreamReader
from runtime.utils.data.datapipes.iter.grouping import BatcherIterDataPipe as Batcher
from runtime.utils.data.datapipes.iter.grouping import GrouperIterDataPipe as Grouper
from runtime.utils.data.datapipes.iter.grouping import UnBatcherIterDataPipe as UnBatcher
from runtime.utils.data.datapipes.iter.selecting import FilterIterDataPipe as Filter
from runtime.utils.data.datapipes.iter.sharding import ShardingFilterIterDataPipe as ShardingFilter
from runtime.utils.data.datapipes.iter.utils import IterableWrapperIterDataPipe as IterableWrapper

__all__ = ["Batcher", "Collator", "Concater", "Demultiplexer", "FileLister", "FileOpener", "Filter", "Forker",
           "Grouper", "IterableWrapper", "Mapper", "Multiplexer", "Sampler", "ShardingFilter", "Shuffler",
           "StreamReader", "UnBatcher", "Zipper"]
