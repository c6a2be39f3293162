"""`G.utils.data`: Dataset, TensorDataset, Subset, random_split, samplers and DataLoader (torch.utils.data).

Single-process only: `num_workers` is accepted for compatibility and must be 0. Shuffling draws its
permutation from a `G.Generator` (the `generator=` argument, else the default CPU generator), so
`G.manual_seed` makes the order reproducible; the order is not PyTorch's (the streams differ).
"""

from __future__ import annotations

import math
import numbers
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from runtime import opcall
from runtime.tensor import Tensor


def _G() -> Any:
    return opcall.api


def _permutation(n: int, generator: Any = None) -> list[int]:
    """A random permutation of range(n) from `generator` (a CPU G.Generator) or the default one."""
    from runtime.random import default_generator
    g = default_generator() if generator is None else generator
    if g.device.type != "cpu":
        raise RuntimeError(f"Expected a 'cpu' device type for generator but found '{g.device}'")
    return [int(i) for i in g.engine().permutation(n)]


class Dataset:
    """A map-style dataset: subclasses define `__getitem__` (and usually `__len__`)."""

    def __getitem__(self, index: Any) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset read by iteration (`__iter__`), not by index."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")


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


class ConcatDataset(Dataset):
    """The datasets one after another."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        self.cumulative_sizes = list(np.cumsum([len(d) for d in self.datasets]))  # type: ignore[arg-type]

    def __len__(self) -> int:
        return int(self.cumulative_sizes[-1])

    def __getitem__(self, index: int) -> Any:
        n = len(self)
        if index < 0:
            if -index > n:
                raise ValueError("absolute value of index should not exceed dataset length")
            index += n
        if index >= n:
            raise IndexError(f"index {index} is out of range for a dataset of length {n}")
        which = int(np.searchsorted(self.cumulative_sizes, index, side="right"))
        start = int(self.cumulative_sizes[which - 1]) if which else 0
        return self.datasets[which][index - start]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

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
    perm = _permutation(n, generator)
    out, offset = [], 0
    for k in lengths:
        out.append(Subset(dataset, perm[offset:offset + int(k)]))
        offset += int(k)
    return out


# -- samplers ---------------------------------------------------------------------------------------

class Sampler:
    """An iterable of dataset indices."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A fresh random permutation of the indices on every pass (`generator` fixes the sequence)."""

    def __init__(self, data_source: Any, replacement: bool = False, num_samples: int | None = None,
                 generator: Any = None) -> None:
        if replacement:
            raise NotImplementedError("RandomSampler(replacement=True) is not supported by opgen")
        self.data_source, self.generator = data_source, generator
        self._num_samples = num_samples
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        left = self.num_samples
        while left > 0:
            perm = _permutation(n, self.generator)
            yield from perm[:left]
            left -= n

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of `batch_size` indices from `sampler` (the last one shorter unless `drop_last`)."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


# -- collation --------------------------------------------------------------------------------------

def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples into a batch, recursing into tuples, lists and dicts as PyTorch does.

    Tensors are stacked; NumPy arrays become stacked tensors; Python floats give a float64 tensor, ints an
    int64 tensor, bools a bool tensor; strings stay a list; a tuple or list of fields gives a list of
    collated fields (a namedtuple keeps its type); a dict gives a dict of collated values.
    """
    G = _G()
    elem = batch[0]
    if isinstance(elem, Tensor):
        return G.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        return G.stack([G.from_numpy(np.ascontiguousarray(b)) for b in batch], 0)
    if isinstance(elem, np.generic):
        return G.tensor(np.array(batch))
    if isinstance(elem, bool):
        return G.tensor(list(batch), dtype=G.bool)
    if isinstance(elem, numbers.Integral):
        return G.tensor(list(batch), dtype=G.int64)
    if isinstance(elem, numbers.Real):
        return G.tensor(list(batch), dtype=G.float64)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch, strict=True)))
    if isinstance(elem, Sequence):
        size = len(elem)
        if any(len(b) != size for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch, strict=True)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                    f"found {type(elem)}")


class _SharedIterator:
    """A DataLoader's iterator, which threads may share: each `next` takes a lock, so every batch goes to
    exactly one caller (a bare generator raises "generator already executing" when two threads step it)."""

    def __init__(self, batches: Iterator[Any]) -> None:
        self._batches = batches
        self._lock = threading.Lock()

    def __iter__(self) -> _SharedIterator:
        return self

    def __next__(self) -> Any:
        with self._lock:
            return next(self._batches)


class DataLoader:
    """Batches of a dataset: `batch_size` samples collated by `collate_fn`, optionally shuffled."""

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Iterable[Any] | None = None, batch_sampler: Iterable[list[Any]] | None = None,
                 num_workers: int = 0, collate_fn: Callable[[list[Any]], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None, *, generator: Any = None,
                 **_: Any) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if num_workers > 0:
            raise NotImplementedError("opgen's DataLoader loads in the main process only: use num_workers=0")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        self.dataset = dataset
        self.batch_size, self.drop_last, self.num_workers = batch_size, drop_last, num_workers
        self.generator = generator
        if sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        self.sampler = sampler
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_sampler = batch_sampler
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if batch_sampler is not None else (lambda x: x))

    def __iter__(self) -> Iterator[Any]:
        return _SharedIterator(self._batches())

    def _batches(self) -> Iterator[Any]:
        if self.batch_sampler is None:
            for i in self.sampler:
                yield self.collate_fn(self.dataset[i])
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self) -> int:
        source = self.batch_sampler if self.batch_sampler is not None else self.sampler
        return len(source)  # type: ignore[arg-type]


__all__ = ["BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset", "RandomSampler",
           "Sampler", "SequentialSampler", "Subset", "TensorDataset", "default_collate", "random_split"]
