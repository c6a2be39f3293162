"""Fetchers (torch.utils.data._utils.fetch): what turns one sampler step into one batch, for map-style
datasets (indices read by `__getitem__`/`__getitems__`) and iterable ones (the next items of an iterator)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class _BaseDatasetFetcher:
    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable[[Any], Any], drop_last: bool) -> None:
        self.dataset, self.auto_collation, self.collate_fn, self.drop_last = (dataset, auto_collation, collate_fn,
                                                                              drop_last)

    def fetch(self, possibly_batched_index: Any) -> Any:
        raise NotImplementedError


class _IterableDatasetFetcher(_BaseDatasetFetcher):
    """The next item (or, auto-collating, up to len(index) items) of the dataset's iterator; StopIteration
    when it is done (or when a short last batch is dropped)."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable[[Any], Any], drop_last: bool) -> None:
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index: Any) -> Any:
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


class _MapDatasetFetcher(_BaseDatasetFetcher):
    """`dataset[i]` for the index (or each index of a batch, through `__getitems__` where the dataset has it)."""

    def fetch(self, possibly_batched_index: Any) -> Any:
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(possibly_batched_index) if getitems else [self.dataset[i] for i in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)
