"""IterableWrapper: any iterable as an IterDataPipe."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterable, Iterator, Sized
from typing import Any

from runtime.utils.data.datapipes.datapipe import IterDataPipe


class IterableWrapperIterDataPipe(IterDataPipe):
    """The items of `iterable`; with `deepcopy` (the default) each iteration reads a deep copy, so in-place
    changes to yielded items do not reach the source."""

    def __init__(self, iterable: Iterable[Any], deepcopy: bool = True) -> None:
        self.iterable = iterable
        self.deepcopy = deepcopy

    def __iter__(self) -> Iterator[Any]:
        source = self.iterable
        if self.deepcopy:
            try:
                source = copy.deepcopy(self.iterable)
            except TypeError:
                warnings.warn("The input iterable can not be deepcopied, please be aware of in-place modification "
                              "would affect source data.", stacklevel=2)
        yield from source

    def __len__(self) -> int:
        if isinstance(self.iterable, Sized):
            return len(self.iterable)
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")
