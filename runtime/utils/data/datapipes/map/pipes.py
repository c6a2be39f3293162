"""The MapDataPipes (torch.utils.data.datapipes.map): a sequence as a pipe, map, batch, concat, zip, and
shuffle (an IterDataPipe over the keys in a random order)."""

from __future__ import annotations

import copy
import random
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from runtime.utils.data.datapipes._decorator import functional_datapipe
from runtime.utils.data.datapipes.datapipe import DataChunk, IterDataPipe, MapDataPipe
from runtime.utils.data.datapipes.iter.combinatorics import draw_seed


class SequenceWrapperMapDataPipe(MapDataPipe):
    """A sequence or mapping as a MapDataPipe (deep-copied at construction unless `deepcopy=False`)."""

    def __init__(self, sequence: Sequence[Any] | Mapping[Any, Any], deepcopy: bool = True) -> None:
        if deepcopy:
            try:
                sequence = copy.deepcopy(sequence)
            except TypeError:
                warnings.warn("The input sequence can not be deepcopied, please be aware of in-place modification "
                              "would affect source data", stacklevel=2)
        self.sequence = sequence

    def __getitem__(self, index: Any) -> Any:
        return self.sequence[index]

    def __len__(self) -> int:
        return len(self.sequence)


@functional_datapipe("map")
class MapperMapDataPipe(MapDataPipe):
    """`fn` of each item, computed when read (functional name `map`)."""

    def __init__(self, datapipe: MapDataPipe, fn: Callable[[Any], Any] = lambda x: x) -> None:
        if not callable(fn):
            raise TypeError(f"map expects a callable, got {type(fn).__name__}")
        self.datapipe, self.fn = datapipe, fn

    def __getitem__(self, index: Any) -> Any:
        return self.fn(self.datapipe[index])

    def __len__(self) -> int:
        return len(self.datapipe)


@functional_datapipe("batch")
class BatcherMapDataPipe(MapDataPipe):
    """Item i is the DataChunk of items i*batch_size ... (i+1)*batch_size-1, the last one shorter unless
    `drop_last` (functional name `batch`)."""

    def __init__(self, datapipe: MapDataPipe, batch_size: int, drop_last: bool = False,
                 wrapper_class: type = DataChunk) -> None:
        if batch_size <= 0:
            raise AssertionError("Batch size is required to be larger than 0!")
        self.datapipe, self.batch_size, self.drop_last, self.wrapper_class = (datapipe, batch_size, drop_last,
                                                                              wrapper_class)

    def __getitem__(self, index: int) -> Any:
        batch: list[Any] = []
        try:
            batch.extend(self.datapipe[i] for i in range(index * self.batch_size, (index + 1) * self.batch_size))
            return self.wrapper_class(batch)
        except IndexError as e:
            if not self.drop_last and batch:
                return self.wrapper_class(batch)
            raise IndexError(f"Index {index} is out of bound.") from e

    def __len__(self) -> int:
        n = len(self.datapipe)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


def _check_map_pipes(datapipes: tuple[Any, ...]) -> None:
    if not datapipes:
        raise ValueError("Expected at least one DataPipe, but got nothing")
    if not all(isinstance(dp, MapDataPipe) for dp in datapipes):
        raise TypeError("Expected all inputs to be `MapDataPipe`")
    if not all(hasattr(dp, "__len__") for dp in datapipes):
        raise TypeError("Expected all inputs to be `Sized`")


@functional_datapipe("concat")
class ConcaterMapDataPipe(MapDataPipe):
    """The items of each pipe, one after the other (functional name `concat`)."""

    def __init__(self, *datapipes: MapDataPipe) -> None:
        _check_map_pipes(datapipes)
        self.datapipes = datapipes

    def __getitem__(self, index: int) -> Any:
        offset = 0
        for dp in self.datapipes:
            if index - offset < len(dp):
                return dp[index - offset]
            offset += len(dp)
        raise IndexError(f"Index {index} is out of range.")

    def __len__(self) -> int:
        return sum(len(dp) for dp in self.datapipes)


@functional_datapipe("zip")
class ZipperMapDataPipe(MapDataPipe):
    """Item i is the tuple of each pipe's item i; as long as the shortest (functional name `zip`)."""

    def __init__(self, *datapipes: MapDataPipe) -> None:
        _check_map_pipes(datapipes)
        self.datapipes = datapipes

    def __getitem__(self, index: Any) -> tuple[Any, ...]:
        res = []
        for dp in self.datapipes:
            try:
                res.append(dp[index])
            except IndexError as e:
                raise IndexError(f"Index {index} is out of range for one of the input MapDataPipes {dp}.") from e
        return tuple(res)

    def __len__(self) -> int:
        return min(len(dp) for dp in self.datapipes)


class ShufflerIterDataPipe(IterDataPipe):
    """The items of a MapDataPipe at `indices` (all keys by default) in a random order, reseeded each pass
    like the IterDataPipe shuffle; registered as MapDataPipe's `shuffle`."""

    def __init__(self, datapipe: MapDataPipe, *, indices: list[Any] | None = None) -> None:
        self.datapipe = datapipe
        self.indices = list(range(len(datapipe))) if indices is None else indices
        self._enabled = True
        self._seed: int | None = None
        self._rng = random.Random()
        self._shuffled_indices: list[Any] = self.indices

    def set_shuffle(self, shuffle: bool = True) -> ShufflerIterDataPipe:
        self._enabled = shuffle
        return self

    def set_seed(self, seed: int) -> ShufflerIterDataPipe:
        self._seed = seed
        return self

    def __iter__(self) -> Iterator[Any]:
        if not self._enabled:
            for idx in self.indices:
                yield self.datapipe[idx]
        else:
            while self._shuffled_indices:
                yield self.datapipe[self._shuffled_indices.pop()]

    def reset(self) -> None:
        if self._enabled and self._seed is None:
            self._seed = draw_seed()
        self._rng.seed(self._seed)
        self._seed = None
        self._shuffled_indices = self._rng.sample(self.indices, len(self.indices))

    def __len__(self) -> int:
        return len(self.datapipe)


MapDataPipe.register_datapipe_as_function("shuffle", ShufflerIterDataPipe)
