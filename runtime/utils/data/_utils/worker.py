"""DataLoader worker processes (torch.utils.data._utils.worker): the loop a worker runs, what it knows about
itself (get_worker_info), how its batches travel back, and how its errors do.

Note [Batches through shared memory]
A worker collates a batch and sends it through a multiprocessing queue, which pickles it. The tensors'
bytes do not go through the pipe: each tensor's array is copied once into a new POSIX shared-memory file
(/dev/shm), and the queue carries only its name, dtype and shape (`SharedArray`). The main process maps the
file, removes its name at once (the mapping keeps the memory until the tensor that views it is freed) and
wraps the mapping as the tensor's storage with no further copy. Where /dev/shm is absent the arrays are
pickled with the batch. Files of batches never received (the loader was shut down early) are removed when
the main process drains the queue at shutdown.
"""

from __future__ import annotations

import importlib
import mmap
import os
import queue
import random
import sys
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from runtime import opcall
from runtime.tensor import Tensor

_SHM_DIR = "/dev/shm"


@dataclass(frozen=True)
class WorkerInfo:
    """What `get_worker_info()` returns inside a worker: its id, the number of workers, its seed (the
    loader's base seed plus the id) and its copy of the dataset."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """This worker's WorkerInfo inside a DataLoader worker process; None in the main process."""
    return _worker_info


# -- errors --------------------------------------------------------------------------------------------
class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with the worker's formatted traceback."""

    def __init__(self, exc_info: tuple[Any, Any, Any], where: str) -> None:
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self) -> None:
        """Raise an exception of the worker's type whose message holds the worker's traceback (a
        RuntimeError when that type cannot be built from one message)."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyError(msg)  # type: ignore[assignment]  # KeyError would repr() a str message
        try:
            exc = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exc


# -- tensors through shared memory ---------------------------------------------------------------------
@dataclass(frozen=True)
class SharedArray:
    """A tensor sent by name (Note [Batches through shared memory])."""

    name: str
    dtype: str        # G dtype name
    np_dtype: str
    shape: tuple[int, ...]
    nbytes: int

    def open(self) -> Tensor:
        path = os.path.join(_SHM_DIR, self.name)
        if self.nbytes == 0:
            os.unlink(path)
            array = np.empty(self.shape, dtype=np.dtype(self.np_dtype))
        else:
            fd = os.open(path, os.O_RDWR)
            try:
                mapping = mmap.mmap(fd, self.nbytes)
            finally:
                os.close(fd)
                os.unlink(path)
            array = np.frombuffer(mapping, dtype=np.dtype(self.np_dtype)).reshape(self.shape)
        return opcall.api.from_numpy(array).to(getattr(opcall.api, self.dtype))

    def discard(self) -> None:
        try:
            os.unlink(os.path.join(_SHM_DIR, self.name))
        except FileNotFoundError:
            pass


def _share(t: Tensor) -> Any:
    if t._device.type != "cpu" or t.dtype.np is None or not os.path.isdir(_SHM_DIR):
        return t
    array = np.ascontiguousarray(t.detach()._data)
    name = f"opgen_dl_{os.getpid()}_{uuid.uuid4().hex}"
    fd = os.open(os.path.join(_SHM_DIR, name), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        if array.nbytes:
            os.ftruncate(fd, array.nbytes)
            with mmap.mmap(fd, array.nbytes) as mapping:
                np.frombuffer(mapping, dtype=array.dtype)[:] = array.reshape(-1)
    finally:
        os.close(fd)
    return SharedArray(name, t.dtype.name, array.dtype.str, tuple(array.shape), array.nbytes)


def _map_tensors(data: Any, fn: Callable[[Any], Any], kind: type) -> Any:
    """`data` with every `kind` inside dicts, lists, tuples and namedtuples replaced by fn(it)."""
    if isinstance(data, kind):
        return fn(data)
    if isinstance(data, dict):
        return {k: _map_tensors(v, fn, kind) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_map_tensors(v, fn, kind) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(_map_tensors(v, fn, kind) for v in data)
    return data


def to_shared(data: Any) -> Any:
    return _map_tensors(data, _share, Tensor)


def from_shared(data: Any) -> Any:
    return _map_tensors(data, SharedArray.open, SharedArray)


def discard_shared(data: Any) -> None:
    _map_tensors(data, SharedArray.discard, SharedArray)


# -- the worker loop ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class IterableEnd:
    """Sent by a worker whose copy of an IterableDataset is exhausted."""

    worker_id: int


RESET = "reset"  # task: start a new pass (persistent workers)


def _seed_worker(seed: int) -> None:
    random.seed(seed)
    opcall.api.manual_seed(seed)
    np.random.seed(seed % (1 << 32))


def _shard_datapipe(dataset: Any, worker_id: int, num_workers: int) -> None:
    """Worker `worker_id`'s share of a DataPipe's sharding_filter (Note [DataPipes under a DataLoader])."""
    from runtime.utils.data.datapipes.datapipe import IterDataPipe, MapDataPipe
    from runtime.utils.data.datapipes.iter.sharding import SHARDING_PRIORITIES
    from runtime.utils.data.graph_settings import apply_sharding
    if isinstance(dataset, (IterDataPipe, MapDataPipe)):
        apply_sharding(dataset, num_workers, worker_id, SHARDING_PRIORITIES.MULTIPROCESSING)


def _reseed_datapipe(dataset: Any, shared_seed: int, passes: int) -> None:
    """A persistent worker's seeds for pass `passes`: the same in every worker of the loader."""
    from runtime.utils.data.datapipes.datapipe import IterDataPipe
    from runtime.utils.data.graph_settings import reseed_random_pipes
    if isinstance(dataset, IterDataPipe):
        reseed_random_pipes(dataset, shared_seed * 1_000_003 + passes)


def worker_loop(dataset: Any, is_iterable: bool, auto_batch: bool, collate_fn: Callable[[Any], Any],
                drop_last: bool, batch_size: int | None, index_queue: Any, result_queue: Any, worker_id: int,
                num_workers: int, seed: int, init_fn: Callable[[int], None] | None, api_module: str) -> None:
    """Run in a worker process: answer each task `(i, indices)` from `index_queue` with `(i, batch)` (or an
    ExceptionWrapper) on `result_queue`, until the task None. `api_module` is the package that installs the
    ops (the main process's `opcall.api`): a worker started by spawn or forkserver imports it first."""
    global _worker_info
    if api_module not in sys.modules:
        importlib.import_module(api_module)
    _seed_worker(seed)
    _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
    init_error = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
    except Exception:
        init_error = ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")
    passes = 0
    if init_error is None:
        try:
            _shard_datapipe(dataset, worker_id, num_workers)
        except Exception:
            init_error = ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")
    iterator = iter(dataset) if is_iterable and init_error is None else None
    exhausted = False
    while True:
        try:
            task = index_queue.get(timeout=5.0)
        except queue.Empty:
            if os.getppid() == 1:
                return  # the main process is gone
            continue
        if task is None:
            break
        if task == RESET:
            passes += 1
            _reseed_datapipe(dataset, seed - worker_id, passes)
            iterator = iter(dataset) if is_iterable else None
            exhausted = False
            continue
        idx, indices = task
        if init_error is not None:
            result_queue.put((idx, init_error))
            init_error = None
            continue
        if exhausted:
            result_queue.put((idx, IterableEnd(worker_id)))
            continue
        try:
            if is_iterable:
                batch = _next_iterable(iterator, auto_batch, batch_size, drop_last, collate_fn)
            elif auto_batch:
                batch = collate_fn([dataset[i] for i in indices])
            else:
                batch = collate_fn(dataset[indices])
            result: Any = to_shared(batch)
        except StopIteration:
            exhausted = True
            result = IterableEnd(worker_id)
        except Exception:
            result = ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")
        result_queue.put((idx, result))


def _next_iterable(iterator: Any, auto_batch: bool, batch_size: int | None, drop_last: bool,
                   collate_fn: Callable[[Any], Any]) -> Any:
    if not auto_batch:
        return collate_fn(next(iterator))
    items = []
    for _ in range(batch_size or 1):
        try:
            items.append(next(iterator))
        except StopIteration:
            break
    if not items or (drop_last and len(items) < batch_size):
        raise StopIteration
    return collate_fn(items)


__all__ = ["ExceptionWrapper", "WorkerInfo", "get_worker_info", "worker_loop"]
