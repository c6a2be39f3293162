"""Work handles and the one thread that drives every communicator of a process.

Note [One thread talks to the communication library]
Every collective, MPI or NCCL, is *posted* and then *tested* by one daemon thread per process, the
progress thread, in the order the program submitted them. This gives four things at once:
  - `async_op=True`: the caller gets a `Work` at once and overlaps its own computation with the
    transfer (DistributedDataParallel starts a bucket's all-reduce during backward this way);
  - order: MPI requires every rank to start the collectives of a communicator in the same order; one
    submission queue keeps each process's order, whatever thread submitted;
  - MPI's thread rules: only this thread calls MPI (MPI_THREAD_SERIALIZED is enough), and it only posts
    non-blocking operations (MPI-3's Iallreduce, Ibcast, ..., Isend/Irecv), so a send that waits for its
    receive never stops the other operations in flight;
  - timeouts: the caller waits on an Event with the process group's timeout, never inside MPI, so a peer
    that died or hangs turns into a `DistBackendError` naming the collective, never a silent hang. A
    communicator with an operation that timed out is broken: at exit the process aborts the whole job
    (MPI_Abort) instead of hanging in MPI_Finalize, which the MPI launcher reports as the job's failure.
Progress of non-blocking MPI operations happens inside MPI calls, so the thread tests its pending
operations in a loop, sleeping between rounds with a backoff from 10 us to 1 ms while nothing completes.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any


class DistError(RuntimeError):
    """An error of the distributed package (PyTorch's `torch.distributed.DistError`)."""


class DistBackendError(DistError):
    """The communication backend failed or timed out (a peer died, hung, or called another collective)."""


Poll = Callable[[], bool]


class Work:
    """A collective in flight, as PyTorch's `Work`: `wait()` blocks until it is done and finishes it in
    the calling thread (copying results into tensors), `is_completed()` tells without blocking."""

    def __init__(self, name: str, timeout: float, finish: Callable[[], Any] | None = None) -> None:
        self.name = name
        self.timeout = timeout
        self._finish = finish
        self._done = threading.Event()
        self._error: BaseException | None = None
        self._result: list[Any] = []
        self._on_timeout: Callable[[], None] | None = None
        self.started = time.perf_counter()  # submitted
        self.completed = 0.0  # when the backend finished it (perf_counter), 0 until then

    def wait(self, timeout: Any = None) -> bool:
        limit = self.timeout if timeout is None else _seconds(timeout)
        if not self._done.wait(limit):
            if self._on_timeout is not None:
                self._on_timeout()
            raise DistBackendError(
                f"{self.name} timed out after {limit:g} s: a peer rank did not take part (it died, hangs, or called "
                "a different collective); the process group is now broken and the job will abort at exit")
        if self._error is not None:
            raise DistBackendError(f"{self.name} failed: {self._error}") from self._error
        finish, self._finish = self._finish, None
        if finish is not None:
            value = finish()
            if value is not None:
                self._result = value if isinstance(value, list) else [value]
        return True

    def is_completed(self) -> bool:
        return self._done.is_set()

    def is_success(self) -> bool:
        return self._done.is_set() and self._error is None

    def exception(self) -> BaseException | None:
        return self._error

    def result(self) -> list[Any]:
        self.wait()
        return self._result

    def _complete(self, error: BaseException | None = None) -> None:
        self.completed = time.perf_counter()
        self._error = error
        self._done.set()


def _seconds(timeout: Any) -> float:
    return float(timeout.total_seconds()) if hasattr(timeout, "total_seconds") else float(timeout)


class ProgressThread:
    """Posts submitted operations in order and tests them until they complete (Note [One thread talks to
    the communication library]). `post()` starts an operation and returns a poll function (True when it
    has completed) or None when it completed while posting."""

    _STOP = object()

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="opgen-distributed-progress", daemon=True)
        self._thread.start()

    def submit(self, post: Callable[[], Poll | None], work: Work) -> Work:
        self._queue.put((post, work))
        return work

    def stop(self) -> None:
        self._queue.put(self._STOP)
        self._thread.join(timeout=5.0)

    def _run(self) -> None:
        pending: list[tuple[Poll, Work]] = []
        backoff = 1e-5
        while True:
            if pending:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    item = None
            else:
                item = self._queue.get()
            if item is self._STOP:
                return
            if item is not None:
                post, work = item
                try:
                    poll = post()
                except BaseException as e:
                    work._complete(e)
                    continue
                if poll is None:
                    work._complete()
                else:
                    pending.append((poll, work))
                backoff = 1e-5
                continue
            still: list[tuple[Poll, Work]] = []
            for poll, work in pending:
                try:
                    done = poll()
                except BaseException as e:
                    work._complete(e)
                    continue
                if done:
                    work._complete()
                else:
                    still.append((poll, work))
            if len(still) == len(pending):
                time.sleep(backoff)
                backoff = min(backoff * 2, 1e-3)
            else:
                backoff = 1e-5
            pending = still
