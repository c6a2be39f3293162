"""sharding_filter: every n-th item, for one of n instances (DataLoader workers, distributed ranks)."""

from __future__ import annotations

from collections.abc import Iterator
from enum import IntEnum
from typing import Any

from runtime.utils.data.datapipes._decorator import functional_datapipe
from runtime.utils.data.datapipes.datapipe import IterDataPipe
from runtime.utils.data.datapipes.iter._common import source_len


class SHARDING_PRIORITIES(IntEnum):
    DEFAULT = 1
    DISTRIBUTED = 2
    MULTIPROCESSING = 3


@functional_datapipe("sharding_filter")
class ShardingFilterIterDataPipe(IterDataPipe):
    """Item i where `i % num_of_instances == instance_id` (functional name `sharding_filter`), after
    `apply_sharding`; shardings of several groups (distributed, then multiprocessing) compose."""

    def __init__(self, source_datapipe: IterDataPipe, sharding_group_filter: Any = None) -> None:
        self.source_datapipe = source_datapipe
        self.sharding_group_filter = sharding_group_filter
        self.groups: dict[int, tuple[int, int]] = {}
        self.num_of_instances, self.instance_id = 1, 0

    def is_shardable(self) -> bool:
        return True

    def apply_sharding(self, num_of_instances: int, instance_id: int,
                       sharding_group: SHARDING_PRIORITIES = SHARDING_PRIORITIES.DEFAULT) -> None:
        if not 0 <= instance_id < num_of_instances:
            raise ValueError(f"instance_id({instance_id}) should be smaller than num_of_instances({num_of_instances})")
        default = SHARDING_PRIORITIES.DEFAULT
        mixed = (self.groups and default not in self.groups) if sharding_group == default else default in self.groups
        if mixed:
            raise RuntimeError("ShardingFilter cannot mix DEFAULT and non DEFAULT groups")
        self.groups[sharding_group] = (num_of_instances, instance_id)
        self.num_of_instances, self.instance_id = 1, 0
        for key in sorted(self.groups, reverse=True):
            if self.sharding_group_filter is None or key == self.sharding_group_filter:
                n, i = self.groups[key]
                self.instance_id += self.num_of_instances * i
                self.num_of_instances *= n

    def __iter__(self) -> Iterator[Any]:
        for i, item in enumerate(self.source_datapipe):
            if i % self.num_of_instances == self.instance_id:
                yield item

    def __len__(self) -> int:
        n = source_len(self, self.source_datapipe)
        return n // self.num_of_instances + (1 if self.instance_id < n % self.num_of_instances else 0)
