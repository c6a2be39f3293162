"""DistributedSampler: each rank's share of a dataset's indices (PyTorch's `torch.utils.data.distributed`)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np


class DistributedSampler:
    """Rank `rank` of `num_replicas` gets every `num_replicas`-th index of the (shuffled) dataset order.
    Shuffling is seeded by `seed + epoch` (call `set_epoch` every epoch), so every rank draws the same
    permutation; with `drop_last=False` the order is padded by repeating its start so that every rank
    gets the same number of samples, else the tail that does not divide evenly is dropped."""

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from runtime.distributed.process_group import default_group

            group = default_group()  # raises when the package is not initialised, as PyTorch
            num_replicas = group.size() if num_replicas is None else num_replicas
            rank = group.rank() if rank is None else rank
        if not 0 <= rank < num_replicas:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, int(num_replicas), int(rank)
        self.shuffle, self.seed, self.drop_last = shuffle, int(seed), drop_last
        self.epoch = 0
        n = len(dataset)
        if drop_last and n % self.num_replicas:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            order = np.random.default_rng(self.seed + self.epoch).permutation(n).tolist()
        else:
            order = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(order)
            while pad > 0:
                order += order[:pad]
                pad = self.total_size - len(order)
        else:
            order = order[:self.total_size]
        return iter(order[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)
