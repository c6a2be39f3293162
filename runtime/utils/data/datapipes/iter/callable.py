"""map and collate: a function applied to each item (or to some of its columns)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from runtime.utils.data._utils.collate import default_collate
from runtime.utils.data.datapipes._decorator import functional_datapipe
from runtime.utils.data.datapipes.datapipe import IterDataPipe
from runtime.utils.data.datapipes.iter._common import source_len, validate_input_col


def apply_to_columns(fn: Callable[..., Any], data: Any, input_col: Any, output_col: Any) -> Any:
    """`fn(data)`, or `fn` of the columns `input_col` of `data` written back: to `input_col` (its first column
    where it names several, the others removed), to `output_col`, or appended (`output_col=-1`)."""
    if input_col is None:
        return fn(data)
    if isinstance(input_col, (list, tuple)):
        res = fn(*(data[col] for col in input_col))
    else:
        res = fn(data[input_col])
    was_tuple = isinstance(data, tuple)
    data = list(data) if was_tuple else data
    if output_col is None:
        if isinstance(input_col, (list, tuple)):
            data[input_col[0]] = res
            for idx in sorted(input_col[1:], reverse=True):
                del data[idx]
        else:
            data[input_col] = res
    elif output_col == -1:
        data.append(res)
    else:
        data[output_col] = res
    return tuple(data) if was_tuple else data


@functional_datapipe("map")
class MapperIterDataPipe(IterDataPipe):
    """`fn` of each item (functional name `map`); `input_col`/`output_col` pick the columns of tuples,
    lists or dicts it reads and writes."""

    def __init__(self, datapipe: IterDataPipe, fn: Callable[..., Any], input_col: Any = None,
                 output_col: Any = None) -> None:
        if not callable(fn):
            raise TypeError(f"map expects a callable, got {type(fn).__name__}")
        if input_col is None and output_col is not None:
            raise ValueError("`output_col` must be None when `input_col` is None.")
        if isinstance(output_col, (list, tuple)):
            if len(output_col) > 1:
                raise ValueError("`output_col` must be a single-element list or tuple")
            output_col = output_col[0]
        if input_col is not None:
            validate_input_col(fn, input_col)
        self.datapipe, self.fn, self.input_col, self.output_col = datapipe, fn, input_col, output_col

    def __iter__(self) -> Iterator[Any]:
        for data in self.datapipe:
            yield apply_to_columns(self.fn, data, self.input_col, self.output_col)

    def __len__(self) -> int:
        return source_len(self, self.datapipe)


@functional_datapipe("collate")
class CollatorIterDataPipe(MapperIterDataPipe):
    """Each item (a batch) through `collate_fn`, `default_collate` by default (functional name `collate`)."""

    def __init__(self, datapipe: IterDataPipe, conversion: Any = None,
                 collate_fn: Callable[[Any], Any] | None = None) -> None:
        if conversion is not None:
            if collate_fn is not None:
                raise ValueError("collate: give `conversion` or `collate_fn`, not both")
            if not callable(conversion):
                raise NotImplementedError("collate: `conversion` as a dict of column functions is not supported "
                                          "in opgen; pass a callable")
            collate_fn = conversion
        super().__init__(datapipe, fn=collate_fn if collate_fn is not None else default_collate)
