"""DataLoader (torch.utils.data.dataloader): batches of a dataset, loaded in this process or in workers.

Note [DataLoader workers]
With `num_workers=0` a pass is a generator in the main process (`_single_process_batches`). With
`num_workers > 0` a pass is a `_MultiProcessingIter`: it starts `num_workers` processes (the default
multiprocessing context, or `multiprocessing_context=`) running `worker_loop` (_utils/worker.py), each
with its own task queue and one shared result queue. The main process hands out tasks round robin (a
batch's indices; for an IterableDataset, "your next batch"), keeps `prefetch_factor` tasks per worker in
flight, and returns results in task order, buffering those that arrive early. Batches come back through
shared memory (Note [Batches through shared memory]). An exception in a worker comes back as an
ExceptionWrapper and is raised by the main process with the worker's traceback; a worker that dies is
reported by pid; `timeout` bounds the wait for one batch. Workers end when the pass ends (or, with
`persistent_workers`, when the loader is collected), are joined, and are terminated if they do not exit.
A worker started by spawn or forkserver has no ops installed: it imports the package that installed the main
process's (`opcall.api.__name__`, handed over by name, as first_call.py's loaders get theirs).

Note [DataPipes under a DataLoader]
A DataPipe dataset (datapipes/datapipe.py) is a dataset like any other, plus three settings applied over its
graph (graph_settings.py): `shuffle=` given to the DataLoader turns the pipe's shuffles on or off (shuffle=True
appends one where there is none; an IterableDataset that is no DataPipe refuses `shuffle`); each pass seeds
the random pipes from one seed drawn from `generator` (`reseed_random_pipes`), the same in every worker, so
shuffles before a `sharding_filter` agree; and in worker k of n, `sharding_filter` keeps every n-th item
from the k-th (`apply_sharding` with SHARDING_PRIORITIES.MULTIPROCESSING). Persistent workers reseed at
every pass from the worker's seed less its id (shared by the pass's workers) and the pass number.
"""

from __future__ import annotations

import itertools
import multiprocessing
import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from runtime import opcall
from runtime.utils.data._utils.collate import default_collate, default_convert
from runtime.utils.data._utils.fetch import _IterableDatasetFetcher, _MapDatasetFetcher
from runtime.utils.data._utils.worker import (
    RESET,
    ExceptionWrapper,
    IterableEnd,
    discard_shared,
    from_shared,
    get_worker_info,
    worker_loop,
)
from runtime.utils.data.datapipes.datapipe import IterDataPipe
from runtime.utils.data.dataset import IterableDataset
from runtime.utils.data.graph_settings import apply_shuffle_settings, reseed_random_pipes
from runtime.utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler, _engine

_POLL_S = 1.0  # how often a wait for a batch checks that the workers are alive


class _DatasetKind:
    """The two kinds of dataset a DataLoader reads, and the fetcher of each (_utils/fetch.py)."""

    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind: int, dataset: Any, auto_collation: bool, collate_fn: Callable[[Any], Any],
                       drop_last: bool) -> Any:
        if kind == _DatasetKind.Map:
            return _MapDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)
        return _IterableDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)


class _InfiniteConstantSampler:
    """The sampler of an IterableDataset: None forever (the dataset decides what comes next)."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


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

    def __getattr__(self, name: str) -> Any:  # the worker iterator's own attributes (tests, shutdown)
        return getattr(self._batches, name)


class DataLoader:
    """Batches of a dataset: `batch_size` samples collated by `collate_fn`, optionally shuffled, loaded by
    `num_workers` processes (Note [DataLoader workers]). `pin_memory` is accepted and changes nothing
    (opgen's host-to-GPU copies need no pinned buffers of the user's)."""

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Iterable[Any] | None = None, batch_sampler: Iterable[list[Any]] | None = None,
                 num_workers: int = 0, collate_fn: Callable[[Any], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None, multiprocessing_context: Any = None,
                 generator: Any = None, *, prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing. Let num_workers "
                             "> 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        is_iterable = isinstance(dataset, IterableDataset)
        if isinstance(dataset, IterDataPipe):  # Note [DataPipes under a DataLoader]
            dataset = apply_shuffle_settings(dataset, shuffle=shuffle)
            shuffle = None
        if is_iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
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
        self.generator, self.timeout, self.worker_init_fn = generator, timeout, worker_init_fn
        self.prefetch_factor, self.persistent_workers = prefetch_factor, persistent_workers
        self.pin_memory, self.pin_memory_device, self.in_order = pin_memory, pin_memory_device, in_order
        self.multiprocessing_context = multiprocessing_context
        self._is_iterable = is_iterable
        self._dataset_kind = _DatasetKind.Iterable if is_iterable else _DatasetKind.Map
        if sampler is None:
            if is_iterable:
                sampler = _InfiniteConstantSampler()
            else:
                sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        self.sampler = sampler
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_sampler = batch_sampler
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if self._auto_collation else default_convert)
        self._persistent_iter: _MultiProcessingIter | None = None

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    def __iter__(self) -> Iterator[Any]:
        if isinstance(self.dataset, IterDataPipe) and not (self.persistent_workers and self._persistent_iter):
            reseed_random_pipes(self.dataset, int(_engine(self.generator).integers(0, 1 << 62)))
        if self.num_workers == 0:
            return _SharedIterator(self._single_process_batches())
        if self.persistent_workers:
            if self._persistent_iter is None:
                self._persistent_iter = _MultiProcessingIter(self)
            else:
                self._persistent_iter.reset()
            return _SharedIterator(self._persistent_iter)
        return _SharedIterator(_MultiProcessingIter(self))

    def _single_process_batches(self) -> Iterator[Any]:
        if self._is_iterable:
            yield from _iterable_batches(iter(self.dataset), self)
            return
        if self.batch_sampler is None:
            for i in self.sampler:
                yield self.collate_fn(self.dataset[i])
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self) -> int:
        if self._is_iterable:
            n = len(self.dataset)  # TypeError for a dataset without __len__, as in PyTorch
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        source = self.batch_sampler if self.batch_sampler is not None else self.sampler
        return len(source)  # type: ignore[arg-type]


def _iterable_batches(iterator: Iterator[Any], loader: DataLoader) -> Iterator[Any]:
    """The batches of an IterableDataset's iterator in the main process."""
    if loader.batch_size is None:
        for item in iterator:
            yield loader.collate_fn(item)
        return
    batch: list[Any] = []
    for item in iterator:
        batch.append(item)
        if len(batch) == loader.batch_size:
            yield loader.collate_fn(batch)
            batch = []
    if batch and not loader.drop_last:
        yield loader.collate_fn(batch)


_SKIP = object()  # a task answered by IterableEnd: no batch at that position


class _MultiProcessingIter:
    """One pass (or, with persistent workers, every pass) over a DataLoader through worker processes
    (Note [DataLoader workers])."""

    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader
        n = loader.num_workers
        ctx = loader.multiprocessing_context
        if ctx is None or isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        base_seed = int(_engine(loader.generator).integers(0, 1 << 62))
        self._result_queue = ctx.Queue()
        self._index_queues = []
        self._workers = []
        for worker_id in range(n):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            w = ctx.Process(target=worker_loop, daemon=True, args=(
                loader.dataset, loader._is_iterable, loader._auto_collation, loader.collate_fn, loader.drop_last,
                loader.batch_size, index_queue, self._result_queue, worker_id, n, base_seed + worker_id,
                loader.worker_init_fn, opcall.api.__name__))
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._shutdown = False
        self._finalizer = weakref.finalize(self, _shutdown_workers, self._workers, self._index_queues,
                                           self._result_queue)
        self._first = True
        self.reset()

    def reset(self) -> None:
        """Start a pass: new sampler order, `prefetch_factor` tasks per worker sent."""
        if self._shutdown:
            raise RuntimeError("this DataLoader's workers were shut down")
        loader = self._loader
        if not self._first:
            self._drain()
            for q in self._index_queues:
                q.put(RESET)
        self._first = False
        source = loader.batch_sampler if loader._auto_collation else loader.sampler
        self._sampler_iter = iter(source)  # type: ignore[call-overload]
        self._send_idx = 0
        self._rcvd_idx = 0
        self._tasks: dict[int, list[Any]] = {}  # task index -> [worker id] or [worker id, result]
        self._active = [True] * loader.num_workers
        self._cycle = itertools.cycle(range(loader.num_workers))
        for _ in range((loader.prefetch_factor or 0) * loader.num_workers or loader.num_workers):
            self._put_task()

    def _drain(self) -> None:
        """Receive and drop the results of a pass left unfinished (persistent workers)."""
        for task in self._tasks.values():
            if len(task) == 2:
                discard_shared(task[1])
        waiting = sum(1 for task in self._tasks.values() if len(task) == 1)
        for _ in range(waiting):
            discard_shared(self._get_data()[1])

    def _put_task(self) -> None:
        if not any(self._active):
            return
        try:
            indices = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(len(self._active)):
            worker_id = next(self._cycle)
            if self._active[worker_id]:
                break
        self._index_queues[worker_id].put((self._send_idx, indices))
        self._tasks[self._send_idx] = [worker_id]
        self._send_idx += 1

    def __iter__(self) -> _MultiProcessingIter:
        return self

    def __next__(self) -> Any:
        while True:
            if self._rcvd_idx >= self._send_idx:
                self._end_pass()
                raise StopIteration
            task = self._tasks[self._rcvd_idx]
            if len(task) == 2:
                del self._tasks[self._rcvd_idx]
                self._rcvd_idx += 1
                if task[1] is _SKIP:
                    continue
                self._put_task()
                return self._process(task[1])
            idx, data = self._get_data()
            if isinstance(data, IterableEnd):
                self._active[data.worker_id] = False
                data = _SKIP
            self._tasks[idx].append(data)

    def _process(self, data: Any) -> Any:
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return from_shared(data)

    def _get_data(self) -> tuple[int, Any]:
        timeout = self._loader.timeout
        start = time.monotonic()
        while True:
            wait = _POLL_S if timeout <= 0 else min(_POLL_S, max(timeout - (time.monotonic() - start), 0.0))
            try:
                return self._result_queue.get(timeout=wait)  # type: ignore[no-any-return]
            except queue.Empty:
                dead = [w.pid for w in self._workers if not w.is_alive()]
                if dead:
                    self.shutdown()
                    pids = ", ".join(str(p) for p in dead)
                    raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from None
                if timeout > 0 and time.monotonic() - start >= timeout:
                    self.shutdown()
                    raise RuntimeError(f"DataLoader timed out after {timeout} seconds") from None

    def _end_pass(self) -> None:
        if not self._loader.persistent_workers:
            self.shutdown()

    def shutdown(self) -> None:
        """Stop the workers (joined, or terminated if they do not exit) and free undelivered batches."""
        if not self._shutdown:
            self._shutdown = True
            for task in getattr(self, "_tasks", {}).values():  # received early, never delivered
                if len(task) == 2:
                    discard_shared(task[1])
            self._finalizer()

    def __del__(self) -> None:
        if getattr(self, "_finalizer", None) is not None:
            self.shutdown()


def _shutdown_workers(workers: list[Any], index_queues: list[Any], result_queue: Any) -> None:
    for q in index_queues:
        try:
            q.put(None)
        except (ValueError, OSError):
            pass
    deadline = time.monotonic() + 5.0
    for w in workers:
        w.join(timeout=max(deadline - time.monotonic(), 0.0))
        if w.is_alive():
            w.terminate()
            w.join()
    while True:  # batches sent but never received: their shared-memory files go too
        try:
            _, data = result_queue.get_nowait()
        except (queue.Empty, ValueError, OSError, EOFError):
            break
        discard_shared(data)
    for q in [*index_queues, result_queue]:
        q.cancel_join_thread()
        q.close()


__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]
