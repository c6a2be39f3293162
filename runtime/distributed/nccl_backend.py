"""The NCCL backend: collectives on CUDA tensors through CuPy's NCCL bindings (`cupy.cuda.nccl`).

The communicator is bootstrapped over the MPI world (Note [Who forms the world]): rank 0 makes the NCCL
unique id and MPI broadcasts it. Operations are enqueued on the stream that was current in the calling
thread when the collective was called, so they follow the computation that produced their tensors; the
progress thread polls a CUDA event recorded after each one (Note [One thread talks to the communication
library]). This path needs a real GPU and the NCCL library (`nvidia-nccl-cu12`); the emulated device has
neither, so there the MPI backend runs the same collectives over its host memory.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from runtime.distributed.reduce_op import ReduceOp
from runtime.distributed.work import Work

_NCCL_OPS = {ReduceOp.SUM: "NCCL_SUM", ReduceOp.AVG: "NCCL_SUM", ReduceOp.PRODUCT: "NCCL_PROD",
             ReduceOp.MIN: "NCCL_MIN", ReduceOp.MAX: "NCCL_MAX"}
_NCCL_TYPES = {"int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "bool": "NCCL_UINT8", "int32": "NCCL_INT32",
               "int64": "NCCL_INT64", "float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64"}


def _nccl() -> Any:
    from cupy.cuda import nccl

    if not getattr(nccl, "available", True) or not hasattr(nccl, "NcclCommunicator"):
        raise RuntimeError("backend 'nccl' needs the NCCL library: pip install nvidia-nccl-cu12 (CUDA 12) and a "
                           "CuPy that finds it; use backend='mpi' for CPU tensors")
    return nccl


def nccl_available() -> bool:
    try:
        from runtime.cuda import is_available, is_emulated

        if not is_available() or is_emulated():
            return False
        _nccl()
    except Exception:
        return False
    return True


class NCCLComm:
    """One NCCL communicator (one GPU per rank) with the collectives of the NCCL backend."""

    backend = "nccl"

    def __init__(self, comm: Any, mpi: Any, device_index: int) -> None:
        self.nccl = _nccl()
        self.comm = comm
        self.mpi = mpi
        self.rank, self.size = mpi.rank, mpi.size
        self.device_index = device_index
        self.timeout = mpi.timeout

    @classmethod
    def create(cls, mpi: Any, device_id: Any) -> NCCLComm:
        from runtime.cuda import device_count, is_available, is_emulated

        if not is_available() or is_emulated():
            raise RuntimeError("backend 'nccl' needs a real CUDA GPU (this machine has none, or runs the emulated "
                               "device): use backend='mpi', which also runs on the emulated device")
        nccl = _nccl()
        if device_id is not None:
            index = int(getattr(device_id, "index", device_id) or 0)
        else:
            local = os.environ.get("LOCAL_RANK") or os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK") or "0"
            index = int(local) % max(device_count(), 1)
        uid = mpi.bcast_object(nccl.get_unique_id() if mpi.rank == 0 else None, 0)
        import cupy

        with cupy.cuda.Device(index):
            comm = nccl.NcclCommunicator(mpi.size, uid, mpi.rank)
        return cls(comm, mpi, index)

    def _submit(self, name: str, launch: Callable[[int], None], finish: Callable[[], Any] | None = None) -> Work:
        import cupy

        stream = cupy.cuda.get_current_stream().ptr  # the caller's stream: after the ops that made the tensors
        index = self.device_index

        def post() -> Callable[[], bool]:
            with cupy.cuda.Device(index):
                launch(stream)
                event = cupy.cuda.Event(disable_timing=True)
                event.record(cupy.cuda.ExternalStream(stream))
            self.comm.check_async_error()
            return lambda: bool(event.done)

        return self.mpi.submit(f"{name} (nccl)", post, finish)

    def _type(self, array: Any) -> int:
        name = _NCCL_TYPES.get(str(array.dtype))
        if name is None:
            raise TypeError(f"backend 'nccl' has no type for {array.dtype}")
        return int(getattr(self.nccl, name))

    def _op(self, op: ReduceOp) -> int:
        name = _NCCL_OPS.get(op)
        if name is None:
            raise ValueError(f"backend 'nccl' has no {op.name} reduction")
        return int(getattr(self.nccl, name))

    def allreduce(self, buf: Any, op: ReduceOp, finish: Callable[[], Any] | None = None,
                  name: str = "all_reduce") -> Work:
        t, o = self._type(buf), self._op(op)
        return self._submit(name, lambda s: self.comm.allReduce(buf.data.ptr, buf.data.ptr, buf.size, t, o, s), finish)

    def broadcast(self, buf: Any, root: int, finish: Callable[[], Any] | None = None) -> Work:
        t = self._type(buf)
        return self._submit("broadcast", lambda s: self.comm.bcast(buf.data.ptr, buf.size, t, root, s), finish)

    def reduce(self, buf: Any, op: ReduceOp, root: int, finish: Callable[[], Any] | None = None) -> Work:
        t, o = self._type(buf), self._op(op)
        if self.rank != root:
            scratch = buf.copy()  # the non-root's tensor keeps its values
            return self._submit("reduce", lambda s: self.comm.reduce(buf.data.ptr, scratch.data.ptr, buf.size, t, o,
                                                                     root, s), finish)
        return self._submit("reduce", lambda s: self.comm.reduce(buf.data.ptr, buf.data.ptr, buf.size, t, o, root, s),
                            finish)

    def allgather(self, send: Any, recv: Any, finish: Callable[[], Any] | None = None,
                  name: str = "all_gather") -> Work:
        import cupy

        send, recv_dev = cupy.asarray(send), cupy.asarray(recv)
        t = self._type(send)

        def done() -> Any:
            if recv_dev is not recv:
                recv[...] = recv_dev.get() if hasattr(recv, "__array_interface__") else recv_dev
            return finish() if finish is not None else None
        return self._submit(name, lambda s: self.comm.allGather(send.data.ptr, recv_dev.data.ptr, send.size, t, s),
                            done)

    def reduce_scatter(self, send: Any, recv: Any, op: ReduceOp, finish: Callable[[], Any] | None = None) -> Work:
        t, o = self._type(send), self._op(op)
        return self._submit("reduce_scatter", lambda s: self.comm.reduceScatter(send.data.ptr, recv.data.ptr,
                                                                                recv.size, t, o, s), finish)

    def send(self, buf: Any, dst: int, tag: int) -> Work:
        t = self._type(buf)
        return self._submit(f"send to rank {dst}", lambda s: self.comm.send(buf.data.ptr, buf.size, t, dst, s))

    def recv(self, buf: Any, src: int | None, tag: int, finish: Callable[[int], Any]) -> Work:
        if src is None:
            raise ValueError("backend 'nccl' receives from a given rank: pass src")
        t = self._type(buf)
        return self._submit(f"recv from rank {src}", lambda s: self.comm.recv(buf.data.ptr, buf.size, t, src, s),
                            lambda: finish(src))

    def barrier(self) -> Work:
        return self.mpi.barrier()

    def gather(self, *args: Any, **kwargs: Any) -> Work:
        raise NotImplementedError("backend 'nccl': gather is not implemented; use all_gather_into_tensor")

    def scatter(self, *args: Any, **kwargs: Any) -> Work:
        raise NotImplementedError("backend 'nccl': scatter is not implemented; use broadcast")

    def alltoallv(self, send: Any, send_counts: Sequence[int], recv: Any, recv_counts: Sequence[int],
                  finish: Callable[[], Any] | None = None) -> Work:
        raise NotImplementedError("backend 'nccl': all_to_all is not implemented")
