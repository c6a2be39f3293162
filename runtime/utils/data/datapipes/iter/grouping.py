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


@functional_datapipe("groupby")
class GrouperIterDataPipe(IterDataPipe):
    """DataChunks of items with equal `group_key_fn(item)` (functional name `groupby`), each emitted when it
    reaches `group_size`; when `buffer_size` items are buffered, the largest group is emitted (or, smaller
    than `guaranteed_group_size`, dropped with `drop_remaining`, else a RuntimeError); at the end the
    remaining groups are emitted in order of first appearance. `keep_key` yields (key, chunk). (Where the
    buffer overflows, PyTorch pairs the emitted group with the key of the item just read; here it keeps its
    own key.)"""

    def __init__(self, datapipe: IterDataPipe, group_key_fn: Any, *, keep_key: bool = False,
                 buffer_size: int = 10000, group_size: int | None = None, guaranteed_group_size: int | None = None,
                 drop_remaining: bool = False) -> None:
        if not callable(group_key_fn):
            raise TypeError(f"groupby expects a callable group_key_fn, got {type(group_key_fn).__name__}")
        self.datapipe, self.group_key_fn, self.keep_key = datapipe, group_key_fn, keep_key
        self.max_buffer_size, self.group_size, self.drop_remaining = buffer_size, group_size, drop_remaining
        self.guaranteed_group_size = None
        if group_size is not None and buffer_size is not None:
            if not 0 < group_size <= buffer_size:
                raise AssertionError("group_size must be > 0 and <= buffer_size")
            self.guaranteed_group_size = group_size
        if guaranteed_group_size is not None:
            if group_size is None or not 0 < guaranteed_group_size <= group_size:
                raise AssertionError("guaranteed_group_size must be > 0 and <= group_size and group_size must be set")
            self.guaranteed_group_size = guaranteed_group_size
        self.wrapper_class = DataChunk
        self.reset()

    def reset(self) -> None:
        self.buffer_elements: dict[Any, list[Any]] = {}
        self.curr_buffer_size = 0

    def _emit(self, key: Any) -> Any:
        items = self.buffer_elements.pop(key)
        self.curr_buffer_size -= len(items)
        chunk = self.wrapper_class(items)
        return (key, chunk) if self.keep_key else chunk

    def __iter__(self) -> Iterator[Any]:
        for x in self.datapipe:
            key = self.group_key_fn(x)
            self.buffer_elements.setdefault(key, []).append(x)
            self.curr_buffer_size += 1
            if self.group_size is not None and len(self.buffer_elements[key]) == self.group_size:
                yield self._emit(key)
            if self.curr_buffer_size == self.max_buffer_size:
                biggest = max(self.buffer_elements, key=lambda k: len(self.buffer_elements[k]))
                size = len(self.buffer_elements[biggest])
                if self.guaranteed_group_size is not None and size < self.guaranteed_group_size:
                    if not self.drop_remaining:
                        raise RuntimeError(f"Failed to group items {self.buffer_elements[biggest]}")
                    self.curr_buffer_size -= size
                    del self.buffer_elements[biggest]
                else:
                    yield self._emit(biggest)
        for key in tuple(self.buffer_elements):
            yield self._emit(key)
