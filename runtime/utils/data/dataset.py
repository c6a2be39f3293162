"""Datasets (torch.utils.data.dataset): map-style and iterable datasets, their combinations, random_split."""

from __future__ import annotations

import bisect
import math
import numbers
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from runtime.tensor import Tensor
from runtime.utils.data.sampler import permutation


class Dataset:
    """A map-style dataset: subclasses define `__getitem__` (and usually `__len__`)."""

    def __getitem__(self, index: Any) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset read by iteration (`__iter__`), not by index. Under a DataLoader with workers every worker
    iterates its own copy: shard with `get_worker_info()` to avoid duplicates."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample i is `tuple(t[i] for t in tensors)`; every tensor has the same first dimension."""

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        n = tensors[0].shape[0] if tensors[0].dim() else None
        if any(t.dim() == 0 or t.shape[0] != n for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class StackDataset(Dataset):
    """Samples of several datasets of one length side by side: a tuple (positional) or dict (keywords)."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like input/"
                             "output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        datasets = args or tuple(kwargs.values())
        self._length = len(datasets[0])  # type: ignore[arg-type]
        if any(len(d) != self._length for d in datasets):  # type: ignore[arg-type]
            raise ValueError("Size mismatch between datasets")
        self.datasets: tuple[Dataset, ...] | dict[str, Dataset] = args if args else dict(kwargs)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset):
    """The datasets one after another."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(_running_sums(len(d) for d in self.datasets))  # type: ignore[arg-type]

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> Any:
        n = len(self)
        if index < 0:
            if -index > n:
                raise ValueError("absolute value of index should not exceed dataset length")
            index += n
        if index >= n:
            raise IndexError(f"index {index} is out of range for a dataset of length {n}")
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


def _running_sums(values: Iterable[int]) -> Iterator[int]:
    total = 0
    for v in values:
        total += v
        yield total


class ChainDataset(IterableDataset):
    """Iterable datasets read one after another (chained on the fly)."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)  # type: ignore[arg-type]
        return total


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices: list[int]) -> list[Any]:
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems is not None:
            return getitems([self.indices[i] for i in indices])  # type: ignore[no-any-return]
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset, lengths: Sequence[int | float], generator: Any = None) -> list[Subset]:
    """Split `dataset` into non-overlapping random Subsets of the given lengths (or fractions summing to 1).

    Fractions are floored, and the remainder is handed out one sample at a time from the first subset
    on, as PyTorch does.
    """
    n = len(dataset)  # type: ignore[arg-type]
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        if any(not 0 <= f <= 1 for f in lengths):
            raise ValueError("Fractions must be between 0 and 1 (inclusive)")
        sizes = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if any(not isinstance(k, numbers.Integral) for k in lengths):
        raise ValueError("lengths must be integers, or fractions that sum to 1")
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = permutation(n, generator)
    out, offset = [], 0
    for k in lengths:
        out.append(Subset(dataset, perm[offset:offset + int(k)]))
        offset += int(k)
    return out


__all__ = ["ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "StackDataset", "Subset",
           "TensorDataset", "random_split"]
