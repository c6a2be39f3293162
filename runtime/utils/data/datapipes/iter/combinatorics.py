"""shuffle (a buffered random order) and Sampler (a sampler's order over a sized pipe)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from runtime.utils.data.datapipes._decorator import functional_datapipe
from runtime.utils.data.datapipes.datapipe import IterDataPipe
from runtime.utils.data.datapipes.iter._common import source_len
from runtime.utils.data.sampler import Sampler, SequentialSampler, _engine


def draw_seed(generator: Any = None) -> int:
    """A seed for a random pipe from `generator` (a G.Generator) or the default generator."""
    return int(_engine(generator).integers(-(2 ** 63), 2 ** 63 - 1, dtype="int64"))


class SamplerIterDataPipe(IterDataPipe):
    """What `sampler(data_source=datapipe, *sampler_args, **sampler_kwargs)` yields (the pipe must be sized)."""

    def __init__(self, datapipe: IterDataPipe, sampler: type = SequentialSampler,
                 sampler_args: tuple[Any, ...] | None = None, sampler_kwargs: dict[str, Any] | None = None) -> None:
        if not hasattr(datapipe, "__len__"):
            raise AssertionError("Sampler class requires input datapipe implemented `__len__`")
        self.datapipe = datapipe
        self.sampler_args = () if sampler_args is None else sampler_args
        self.sampler_kwargs = {} if sampler_kwargs is None else dict(sampler_kwargs)
        self.sampler_kwargs["data_source"] = datapipe
        self.sampler: Sampler = sampler(*self.sampler_args, **self.sampler_kwargs)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.sampler)

    def __len__(self) -> int:
        return source_len(self, self.sampler)


@functional_datapipe("shuffle")
class ShufflerIterDataPipe(IterDataPipe):
    """The items in a random order drawn from a buffer of `buffer_size` (a full shuffle when the buffer holds
    them all); functional name `shuffle`. Each iteration reseeds Python's `random.Random` from `set_seed`'s
    seed (used once) or from the default generator; `set_shuffle(False)` passes the items through in order
    (what DataLoader(shuffle=False) sets)."""

    def __init__(self, datapipe: IterDataPipe, *, buffer_size: int = 10000, unbatch_level: int = 0) -> None:
        if buffer_size <= 0:
            raise AssertionError("buffer_size should be larger than 0")
        self.datapipe = datapipe if unbatch_level == 0 else datapipe.unbatch(unbatch_level=unbatch_level)
        self.buffer_size = buffer_size
        self._buffer: list[Any] = []
        self._enabled = True
        self._seed: int | None = None
        self._rng = random.Random()

    def set_shuffle(self, shuffle: bool = True) -> ShufflerIterDataPipe:
        self._enabled = shuffle
        return self

    def set_seed(self, seed: int) -> ShufflerIterDataPipe:
        self._seed = seed
        return self

    def __iter__(self) -> Iterator[Any]:
        if not self._enabled:
            yield from self.datapipe
            return
        for x in self.datapipe:
            if len(self._buffer) == self.buffer_size:
                idx = self._rng.randint(0, len(self._buffer) - 1)
                val, self._buffer[idx] = self._buffer[idx], x
                yield val
            else:
                self._buffer.append(x)
        while self._buffer:
            yield self._buffer.pop(self._rng.randint(0, len(self._buffer) - 1))

    def __len__(self) -> int:
        return source_len(self, self.datapipe)

    def reset(self) -> None:
        self._buffer = []
        if self._enabled:
            if self._seed is None:
                self._seed = draw_seed()
            self._rng.seed(self._seed)
            self._seed = None
