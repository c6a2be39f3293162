"""Pipes of several pipes: concat, zip, mux (round robin), and fork/demux (one pipe read as several)."""

from __future__ import annotations

import copy as copymodule
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Sized
from typing import Any

from runtime.utils.data.datapipes._decorator import functional_datapipe
from runtime.utils.data.datapipes.datapipe import IterDataPipe
from runtime.utils.data.datapipes.iter._common import source_len


def _check_pipes(datapipes: tuple[Any, ...]) -> None:
    if not datapipes:
        raise ValueError("Expected at least one DataPipe, but got nothing")
    if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
        raise TypeError("Expected all inputs to be `IterDataPipe`")


def _all_sized(pipe: Any, datapipes: tuple[Any, ...]) -> list[int]:
    if all(isinstance(dp, Sized) for dp in datapipes):
        return [len(dp) for dp in datapipes]
    raise TypeError(f"{type(pipe).__name__} instance doesn't have valid length")


@functional_datapipe("concat")
class ConcaterIterDataPipe(IterDataPipe):
    """The items of each pipe in turn (functional name `concat`)."""

    def __init__(self, *datapipes: IterDataPipe) -> None:
        _check_pipes(datapipes)
        self.datapipes = datapipes

    def __iter__(self) -> Iterator[Any]:
        for dp in self.datapipes:
            yield from dp

    def __len__(self) -> int:
        return sum(_all_sized(self, self.datapipes))


@functional_datapipe("zip")
class ZipperIterDataPipe(IterDataPipe):
    """Tuples of one item of each pipe, until the shortest ends (functional name `zip`)."""

    def __init__(self, *datapipes: IterDataPipe) -> None:
        if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
            raise TypeError("All inputs are required to be `IterDataPipe` for `ZipIterDataPipe`.")
        self.datapipes = datapipes

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        iterators = [iter(dp) for dp in self.datapipes]
        yield from zip(*iterators, strict=False)

    def __len__(self) -> int:
        return min(_all_sized(self, self.datapipes))


@functional_datapipe("mux")
class MultiplexerIterDataPipe(IterDataPipe):
    """One item of each pipe in turn, round after round, until a pipe ends mid-round (that round is
    dropped; functional name `mux`)."""

    def __init__(self, *datapipes: IterDataPipe) -> None:
        self.datapipes = datapipes
        self.buffer: list[Any] = []

    def __iter__(self) -> Iterator[Any]:
        iterators = [iter(dp) for dp in self.datapipes]
        while iterators:
            for it in iterators:
                try:
                    self.buffer.append(next(it))
                except StopIteration:
                    self.buffer.clear()
                    return
            yield from self.buffer
            self.buffer.clear()

    def __len__(self) -> int:
        return min(_all_sized(self, self.datapipes)) * len(self.datapipes)

    def reset(self) -> None:
        self.buffer = []


class _Splitter(IterDataPipe):
    """One source pipe read by `num_instances` children: each source item goes to the queues of the
    children `route(item)` names. A child that starts a new pass after having started one since the last
    reset resets the splitter: every child reads from the start, and older iterators of all children stop
    being valid. A queue longer than `buffer_size` (>= 0) is a BufferError."""

    def __init__(self, datapipe: IterDataPipe, num_instances: int, buffer_size: int, kind: str) -> None:
        if buffer_size < 0:
            warnings.warn(f"Unlimited buffer size is set for `{kind}`, please be aware of OOM at random places",
                          UserWarning, stacklevel=3)
        self.main_datapipe, self.num_instances, self.buffer_size, self.kind = (datapipe, num_instances,
                                                                               buffer_size, kind)
        self._fresh()

    def _fresh(self) -> None:
        self._source: Iterator[Any] | None = None
        self._exhausted = False
        self._queues: list[deque[Any]] = [deque() for _ in range(self.num_instances)]
        self._started = [False] * self.num_instances
        self._generation = getattr(self, "_generation", 0) + 1

    def route(self, item: Any) -> list[int]:
        raise NotImplementedError

    def start(self, instance_id: int) -> int:
        """A child begins a pass: the generation its iterator belongs to."""
        if self._started[instance_id]:
            if not all(self._started) or any(self._queues) or not self._exhausted:
                warnings.warn(f"Some child DataPipes of `{self.kind}` are not exhausted when __iter__ is called. "
                              "Every child DataPipe reads from the start again.", UserWarning, stacklevel=4)
            self._fresh()
        self._started[instance_id] = True
        return self._generation

    def next_for(self, instance_id: int, generation: int) -> Any:
        """The next item of child `instance_id`; StopIteration at the end."""
        if generation != self._generation:
            raise RuntimeError(f"This iterator has been invalidated, because a new iterator has been created from "
                               f"one of the child DataPipes of `{self.kind}`.")
        queue = self._queues[instance_id]
        while not queue:
            if self._exhausted:
                raise StopIteration
            if self._source is None:
                self._source = iter(self.main_datapipe)
            try:
                item = next(self._source)
            except StopIteration:
                self._exhausted = True
                continue
            for target in self.route(item):
                self._queues[target].append(item)
                if 0 <= self.buffer_size < len(self._queues[target]):
                    raise BufferError(f"{self.kind} buffer overflow, buffer size {self.buffer_size} is insufficient.")
        return queue.popleft()


class _ChildDataPipe(IterDataPipe):
    """One reader of a fork or demux (Note [DataPipes])."""

    def __init__(self, main_datapipe: _Splitter, instance_id: int) -> None:
        self.main_datapipe, self.instance_id = main_datapipe, instance_id

    def __iter__(self) -> Iterator[Any]:
        generation = self.main_datapipe.start(self.instance_id)
        while True:
            try:
                item = self.main_datapipe.next_for(self.instance_id, generation)
            except StopIteration:
                return
            yield item

    def __len__(self) -> int:
        return self.main_datapipe.length_of(self)


class _Forker(_Splitter):
    def __init__(self, datapipe: IterDataPipe, num_instances: int, buffer_size: int, copy: str | None) -> None:
        fns: dict[Any, Callable[[Any], Any]] = {None: lambda x: x, "shallow": copymodule.copy,
                                               "deep": copymodule.deepcopy}
        if copy not in fns:
            raise ValueError(f"Unknown copy method `{copy}` requested, choose one of None, `shallow` or `deep`.")
        self.copy_fn = fns[copy]
        super().__init__(datapipe, num_instances, buffer_size, "fork")

    def route(self, item: Any) -> list[int]:
        return list(range(self.num_instances))

    def next_for(self, instance_id: int, generation: int) -> Any:
        return self.copy_fn(super().next_for(instance_id, generation))

    def length_of(self, child: Any) -> int:
        return source_len(child, self.main_datapipe)


class _Demultiplexer(_Splitter):
    def __init__(self, datapipe: IterDataPipe, num_instances: int, classifier_fn: Callable[[Any], int | None],
                 drop_none: bool, buffer_size: int) -> None:
        self.classifier_fn, self.drop_none = classifier_fn, drop_none
        super().__init__(datapipe, num_instances, buffer_size, "demux")

    def route(self, item: Any) -> list[int]:
        target = self.classifier_fn(item)
        if target is None and self.drop_none:
            return []
        if target is None or not 0 <= target < self.num_instances:
            raise ValueError(f"Output of the classification fn should be between 0 and {self.num_instances - 1}. "
                             f"{target} is returned.")
        return [target]

    def length_of(self, child: Any) -> int:
        raise TypeError(f"{type(child).__name__} instance doesn't have valid length")


def _check_instances(num_instances: int) -> None:
    if num_instances < 1:
        raise ValueError(f"Expected `num_instances` larger than 0, but {num_instances} is found")


@functional_datapipe("fork")
class ForkerIterDataPipe(IterDataPipe):
    """`num_instances` pipes that each yield every item of `datapipe` (read once, buffered up to
    `buffer_size` items ahead; `copy` None, "shallow" or "deep"); functional name `fork`. One instance is
    the pipe itself."""

    def __new__(cls, datapipe: IterDataPipe, num_instances: int, buffer_size: int = 1000,  # type: ignore[misc]
                copy: str | None = None) -> Any:
        _check_instances(num_instances)
        if num_instances == 1:
            return datapipe
        container = _Forker(datapipe, num_instances, buffer_size, copy)
        return [_ChildDataPipe(container, i) for i in range(num_instances)]


@functional_datapipe("demux")
class DemultiplexerIterDataPipe(IterDataPipe):
    """`num_instances` pipes: item x goes to pipe `classifier_fn(x)` (None: dropped with `drop_none`, else
    an error); functional name `demux`."""

    def __new__(cls, datapipe: IterDataPipe, num_instances: int,  # type: ignore[misc]
                classifier_fn: Callable[[Any], int | None], drop_none: bool = False, buffer_size: int = 1000) -> Any:
        _check_instances(num_instances)
        container = _Demultiplexer(datapipe, num_instances, classifier_fn, drop_none, buffer_size)
        return [_ChildDataPipe(container, i) for i in range(num_instances)]
