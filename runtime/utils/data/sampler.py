"""Samplers (torch.utils.data.sampler): iterables of dataset indices, and batches of them.

Random samplers draw from a `G.Generator` (the `generator=` argument, else the default CPU generator), so
`G.manual_seed` makes the order reproducible; the order is not PyTorch's (the streams differ).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any

import numpy as np


def _engine(generator: Any) -> Any:
    from runtime.random import default_generator
    g = default_generator() if generator is None else generator
    if g.device.type != "cpu":
        raise RuntimeError(f"Expected a 'cpu' device type for generator but found '{g.device}'")
    return g.engine()


def permutation(n: int, generator: Any = None) -> list[int]:
    """A random permutation of range(n) from `generator` (a CPU G.Generator) or the default one."""
    return [int(i) for i in _engine(generator).permutation(n)]


class Sampler:
    """An iterable of dataset indices (subclasses define `__iter__`, usually `__len__`)."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random indices: a fresh permutation each pass, or, with `replacement`, `num_samples` independent
    draws; `num_samples` beyond the dataset's length without replacement repeats whole permutations."""

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: int | None = None,
                 generator: Any = None) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        self.data_source, self.replacement, self.generator = data_source, replacement, generator
        self._num_samples = num_samples
        if isinstance(self.num_samples, bool) or not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        if self.replacement:
            engine = _engine(self.generator)
            left = self.num_samples
            while left > 0:  # drawn in chunks, so a long epoch does not hold every index at once
                chunk = min(left, 32)
                yield from (int(i) for i in engine.integers(0, n, size=chunk))
                left -= chunk
            return
        left = self.num_samples
        while left > 0:
            yield from permutation(n, self.generator)[:left]
            left -= n

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (a fresh one every pass)."""

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self) -> Iterator[int]:
        for i in permutation(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices in range(len(weights)), index i drawn with probability weights[i] / sum."""

    def __init__(self, weights: Sequence[float] | Any, num_samples: int, replacement: bool = True,
                 generator: Any = None) -> None:
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = np.asarray(weights.tolist() if hasattr(weights, "tolist") else list(weights), dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (weights must be finite, non-negative and "
                               "have a positive sum)")
        if not replacement and num_samples > int(np.count_nonzero(w)):
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        self.weights, self.num_samples = w, num_samples
        self.replacement, self.generator = replacement, generator

    def __iter__(self) -> Iterator[int]:
        p = self.weights / self.weights.sum()
        draws = _engine(self.generator).choice(len(p), size=self.num_samples, replace=self.replacement, p=p)
        yield from (int(i) for i in draws)

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


__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
           "WeightedRandomSampler"]
