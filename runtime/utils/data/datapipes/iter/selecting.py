"""filter: the items a predicate keeps."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from runtime.utils.data.datapipes._decorator import functional_datapipe
from runtime.utils.data.datapipes.datapipe import IterDataPipe
from runtime.utils.data.datapipes.iter._common import validate_input_col


@functional_datapipe("filter")
class FilterIterDataPipe(IterDataPipe):
    """The items for which `filter_fn` (of the item, or of its columns `input_col`) is true (functional name
    `filter`); the predicate must return a bool."""

    def __init__(self, datapipe: IterDataPipe, filter_fn: Callable[..., bool], input_col: Any = None) -> None:
        if not callable(filter_fn):
            raise TypeError(f"filter expects a callable, got {type(filter_fn).__name__}")
        if input_col is not None:
            validate_input_col(filter_fn, input_col)
        self.datapipe, self.filter_fn, self.input_col = datapipe, filter_fn, input_col

    def _keeps(self, data: Any) -> bool:
        if self.input_col is None:
            res = self.filter_fn(data)
        elif isinstance(self.input_col, (list, tuple)):
            res = self.filter_fn(*(data[c] for c in self.input_col))
        else:
            res = self.filter_fn(data[self.input_col])
        if not isinstance(res, bool):
            raise ValueError(f"Boolean output is required for `filter_fn` of FilterIterDataPipe, got {type(res)}")
        return res

    def __iter__(self) -> Iterator[Any]:
        for data in self.datapipe:
            if self._keeps(data):
                yield data
