"""batch and unbatch: items gathered into DataChunks, and batches flattened back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from runtime.utils.data.datapipes._decorator import functional_datapipe
from runtime.utils.data.datapipes.datapipe import DataChunk, IterDataPipe
from runtime.utils.data.datapipes.iter._common import source_len


@functional_datapipe("batch")
class BatcherIterDataPipe(IterDataPipe):
    """Consecutive items in `wrapper_class` (DataChunk) batches of `batch_size`, the last one shorter unless
    `drop_last` (functional name `batch`)."""

    def __init__(self, datapipe: IterDataPipe, batch_size: int, drop_last: bool = False,
                 wrapper_class: type = DataChunk) -> None:
        if batch_size <= 0:
            raise AssertionError("Batch size is required to be larger than 0!")
        self.datapipe, self.batch_size, self.drop_last, self.wrapper_class = (datapipe, batch_size, drop_last,
                                                                              wrapper_class)

    def __iter__(self) -> Iterator[Any]:
        batch: list[Any] = []
        for x in self.datapipe:
            batch.append(x)
            if len(batch) == self.batch_size:
                yield self.wrapper_class(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.wrapper_class(batch)

    def __len__(self) -> int:
        n = source_len(self, self.datapipe)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


@functional_datapipe("unbatch")
class UnBatcherIterDataPipe(IterDataPipe):
    """The elements of each batch (lists or DataChunks), `unbatch_level` levels deep; -1 flattens every
    level (functional name `unbatch`)."""

    def __init__(self, datapipe: IterDataPipe, unbatch_level: int = 1) -> None:
        self.datapipe, self.unbatch_level = datapipe, unbatch_level

    def __iter__(self) -> Iterator[Any]:
        for element in self.datapipe:
            yield from self._dive(element, self.unbatch_level)

    def _dive(self, element: Any, level: int) -> Iterator[Any]:
        if level < -1:
            raise ValueError("unbatch_level must be -1 or >= 0")
        if level == 0:
            yield element
        elif isinstance(element, list):
            for item in element:
                yield from self._dive(item, level - 1 if level > 0 else -1)
        elif level == -1:
            yield element
        else:
            raise IndexError(f"unbatch_level {self.unbatch_level} exceeds the depth of the DataPipe")
