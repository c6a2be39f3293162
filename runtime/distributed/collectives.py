"""The collectives on tensors and on picklable objects, with PyTorch's signatures and semantics.

Each call checks its tensors (type, device for the group's backend, contiguity, equal dtypes and shapes
where the collective needs them), turns them into the backend's arrays (the tensors' own memory where
the backend can use it, a staging copy otherwise: float16 on MPI, which has no half type), submits the
operation and returns a `Work` with `async_op=True`, else waits for it. Results reach the tensors when
the work is waited on (`Work.wait()` copies staged results back and bumps the tensors' versions).

Note [Checking that the ranks agree]
A collective whose ranks pass tensors of different shapes or dtypes is erroneous in MPI and NCCL: it can
hang, fail, or compute garbage. With `TORCH_DISTRIBUTED_DEBUG=DETAIL` (or `OPGEN_DISTRIBUTED_DEBUG`), every
collective first all-gathers a small descriptor (the collective, dtype, shape, root) and raises on every rank,
naming the ranks that differ, before the data moves. It costs one small all-gather per collective, so it is
off by default, as PyTorch's.
"""

from __future__ import annotations

import os
import pickle
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from runtime.distributed.process_group import ProcessGroup, resolve
from runtime.distributed.reduce_op import ReduceOp
from runtime.distributed.work import Work
from runtime.tensor import Tensor

# bool tensors reduce as PyTorch's: SUM is a logical or, PRODUCT a logical and (on their bytes)
_BOOL_OPS = {ReduceOp.SUM: ReduceOp.BOR, ReduceOp.AVG: ReduceOp.BOR, ReduceOp.PRODUCT: ReduceOp.BAND,
             ReduceOp.MIN: ReduceOp.BAND, ReduceOp.MAX: ReduceOp.BOR, ReduceOp.BAND: ReduceOp.BAND,
             ReduceOp.BOR: ReduceOp.BOR, ReduceOp.BXOR: ReduceOp.BXOR}


def debug_checks() -> bool:
    level = os.environ.get("OPGEN_DISTRIBUTED_DEBUG") or os.environ.get("TORCH_DISTRIBUTED_DEBUG") or ""
    return level.upper() == "DETAIL"


class _Staged:
    """A tensor as an array the backend can use: `array` (1-D, the tensor's memory or a staging copy),
    and `store()`, which writes a staged result back into the tensor and bumps its version."""

    __slots__ = ("tensor", "array", "copy")

    def __init__(self, tensor: Tensor, array: np.ndarray, copy: bool) -> None:
        self.tensor, self.array, self.copy = tensor, array, copy

    def store(self) -> None:
        t = self.tensor
        if self.copy:
            np.asarray(t._data).reshape(-1)[...] = self.array.astype(t._data.dtype)
        t._bump_version()


def _stage(t: Any, pg: ProcessGroup, what: str) -> _Staged:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what} must be a Tensor, not {type(t).__name__}")
    device = t.device
    if pg.backend == "mpi":
        if device.type == "cuda":
            from runtime.cuda import is_emulated

            if not is_emulated():
                raise ValueError(f"{what} is on {device}, but the process group's backend is 'mpi', which moves host "
                                 "memory: use backend='nccl' for CUDA tensors, or move the tensor to the CPU")
        elif device.type != "cpu":
            raise ValueError(f"{what} is on {device}: backend 'mpi' takes CPU tensors")
    elif device.type != "cuda":
        raise ValueError(f"{what} is on {device}, but the process group's backend is 'nccl', which takes CUDA "
                         "tensors: use backend='mpi' for CPU tensors")
    if not t.is_contiguous():
        raise ValueError(f"{what}: Tensors must be contiguous")
    if t.dtype.np is None:
        raise TypeError(f"{what} is {t.dtype}: collectives take the dtypes NumPy has; convert it first, "
                        "e.g. tensor.float()")
    if pg.backend == "nccl":
        return _Staged(t, t._data.reshape(-1), False)
    flat = np.asarray(t._data).reshape(-1)
    if flat.dtype == np.float16:  # MPI has no half type: reduce in float32
        return _Staged(t, flat.astype(np.float32), True)
    if flat.dtype == np.bool_:
        return _Staged(t, flat.view(np.uint8), False)
    return _Staged(t, flat, False)


def _reduce_op(op: Any, t: Tensor) -> ReduceOp:
    if not isinstance(op, ReduceOp):
        raise TypeError(f"op must be a ReduceOp (e.g. ReduceOp.SUM), not {op!r}")
    if t.dtype.is_floating_point:
        if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR):
            raise ValueError(f"{op.name} is a bitwise reduction: it takes integer or bool tensors, not {t.dtype}")
        return op
    if t.dtype.name == "bool":
        return _BOOL_OPS[op]
    if op is ReduceOp.AVG:
        raise ValueError(f"ReduceOp.AVG takes floating-point tensors, not {t.dtype}")
    return op


def _finish(*staged: _Staged, after: Callable[[], Any] | None = None) -> Callable[[], Any]:
    def finish() -> Any:
        for s in staged:
            s.store()
        return after() if after is not None else None
    return finish


def _run(work: Work, async_op: bool) -> Work | None:
    if async_op:
        return work
    work.wait()
    return None


def _check_agree(pg: ProcessGroup, name: str, tensors: Sequence[Tensor], root: int = -1) -> None:
    """Note [Checking that the ranks agree]: raise on every rank when the ranks' calls differ."""
    if not debug_checks():
        return
    desc = np.zeros(16, dtype=np.int64)
    desc[0] = zlib.crc32(name.encode())
    desc[1] = root
    desc[2] = len(tensors)
    if tensors:
        t = tensors[0]
        desc[3] = zlib.crc32(t.dtype.name.encode())
        desc[4] = t.dim()
        desc[5:5 + min(t.dim(), 11)] = list(t.shape)[:11]
    everyone = np.zeros((pg.size(), 16), dtype=np.int64)
    pg.mpi.allgather(desc, everyone, name=f"{name} (agreement check)").wait()  # type: ignore[attr-defined]
    differ = [r for r in range(pg.size()) if not np.array_equal(everyone[r], everyone[0])]
    if differ:
        def show(row: np.ndarray) -> str:
            return f"collective {row[0]:#x}, root {row[1]}, {row[2]} tensors, dtype {row[3]:#x}, shape " \
                   f"{list(row[5:5 + row[4]])}"
        lines = "; ".join(f"rank {pg.ranks[r]}: {show(everyone[r])}" for r in [0, *differ])
        raise RuntimeError(f"{name}: the ranks disagree: ranks {[pg.ranks[r] for r in differ]} differ from rank "
                           f"{pg.ranks[0]} ({lines})")


def _root(pg: ProcessGroup, rank: int | None, group_rank: int | None, what: str) -> int:
    if rank is not None and group_rank is not None:
        raise ValueError(f"give {what} or group_{what}, not both")
    if group_rank is not None:
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"group_{what}={group_rank} is not a rank of a group of {pg.size()}")
        return int(group_rank)
    if rank is None:
        raise ValueError(f"{what} is required")
    return pg.group_rank(int(rank))


# -- collectives --------------------------------------------------------------------------------------
def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: Any = None, async_op: bool = False) -> Work | None:
    """Reduce `tensor` over every rank of the group, in place, on every rank."""
    pg = resolve(group)
    s = _stage(tensor, pg, "all_reduce's tensor")
    op = _reduce_op(op, tensor)
    _check_agree(pg, "all_reduce", [tensor])
    after = None
    if op is ReduceOp.AVG:
        size = pg.size()

        def after() -> None:
            data = np.asarray(tensor._data) if pg.backend == "mpi" else tensor._data
            data /= size
    return _run(pg.comm.allreduce(s.array, op, _finish(s, after=after)), async_op)


def broadcast(tensor: Tensor, src: int | None = None, group: Any = None, async_op: bool = False,
              group_src: int | None = None) -> Work | None:
    """Copy `tensor` of rank `src` into `tensor` of every rank."""
    pg = resolve(group)
    root = _root(pg, src, group_src, "src")
    s = _stage(tensor, pg, "broadcast's tensor")
    _check_agree(pg, "broadcast", [tensor], root)
    return _run(pg.comm.broadcast(s.array, root, _finish(s)), async_op)


def reduce(tensor: Tensor, dst: int | None = None, op: ReduceOp = ReduceOp.SUM, group: Any = None,
           async_op: bool = False, group_dst: int | None = None) -> Work | None:
    """Reduce `tensor` over the group into `tensor` of rank `dst` (the others' are left as they are)."""
    pg = resolve(group)
    root = _root(pg, dst, group_dst, "dst")
    s = _stage(tensor, pg, "reduce's tensor")
    op = _reduce_op(op, tensor)
    _check_agree(pg, "reduce", [tensor], root)
    mine = pg.rank() == root
    after = None
    if op is ReduceOp.AVG and mine:
        size = pg.size()

        def after() -> None:
            np.asarray(tensor._data)[...] /= size
    # a non-root rank's tensor keeps its values: nothing is stored back there
    return _run(pg.comm.reduce(s.array, op, root, _finish(s, after=after) if mine else None), async_op)


def _same_as(t: Any, ref: Tensor, what: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what} must be a Tensor, not {type(t).__name__}")
    if t.dtype != ref.dtype:
        raise TypeError(f"{what} has dtype {t.dtype}, expected {ref.dtype} (the input's)")
    if t.numel() != ref.numel():
        raise ValueError(f"{what} has {t.numel()} elements, expected {ref.numel()} (the input's shape "
                         f"{list(ref.shape)})")


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: Any = None, async_op: bool = False) -> Work | None:
    """Every rank's `tensor` into `tensor_list` (one tensor per rank, in rank order), on every rank."""
    pg = resolve(group)
    if not isinstance(tensor_list, list) or len(tensor_list) != pg.size():
        raise ValueError(f"all_gather: tensor_list must be a list of {pg.size()} tensors (the group's size)")
    for i, t in enumerate(tensor_list):
        _same_as(t, tensor, f"tensor_list[{i}]")
    s = _stage(tensor, pg, "all_gather's tensor")
    _check_agree(pg, "all_gather", [tensor])
    recv = np.empty((pg.size(), s.array.size), dtype=s.array.dtype)
    outs = [_stage(t, pg, f"tensor_list[{i}]") for i, t in enumerate(tensor_list)]

    def after() -> None:
        for out, row in zip(outs, recv, strict=True):
            out.array[...] = row
            out.store()
    return _run(pg.comm.allgather(s.array, recv, after), async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: Any = None,
                           async_op: bool = False) -> Work | None:
    """Every rank's `input_tensor`, concatenated (or stacked) in rank order, into `output_tensor`."""
    pg = resolve(group)
    if output_tensor.dtype != input_tensor.dtype:
        raise TypeError(f"all_gather_into_tensor: output is {output_tensor.dtype}, input {input_tensor.dtype}")
    if output_tensor.numel() != input_tensor.numel() * pg.size():
        raise ValueError(f"all_gather_into_tensor: output has {output_tensor.numel()} elements, expected "
                         f"{input_tensor.numel() * pg.size()} (the input's {input_tensor.numel()} times the group's "
                         f"size {pg.size()})")
    s = _stage(input_tensor, pg, "all_gather_into_tensor's input")
    out = _stage(output_tensor, pg, "all_gather_into_tensor's output")
    _check_agree(pg, "all_gather_into_tensor", [input_tensor])
    return _run(pg.comm.allgather(s.array, out.array, _finish(out), name="all_gather_into_tensor"), async_op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: ReduceOp = ReduceOp.SUM, group: Any = None,
                          async_op: bool = False) -> Work | None:
    """Reduce `input` (the group's size times `output`) over the group; rank r gets the r-th part."""
    pg = resolve(group)
    if output.dtype != input.dtype:
        raise TypeError(f"reduce_scatter_tensor: output is {output.dtype}, input {input.dtype}")
    if input.numel() != output.numel() * pg.size():
        raise ValueError(f"reduce_scatter_tensor: input has {input.numel()} elements, expected "
                         f"{output.numel() * pg.size()} (the output's {output.numel()} times the group's size)")
    op = _reduce_op(op, input)
    s = _stage(input, pg, "reduce_scatter_tensor's input")
    out = _stage(output, pg, "reduce_scatter_tensor's output")
    _check_agree(pg, "reduce_scatter_tensor", [input])
    after = None
    if op is ReduceOp.AVG:
        size = pg.size()

        def after() -> None:
            np.asarray(output._data)[...] /= size
    return _run(pg.comm.reduce_scatter(s.array, out.array, op, _finish(out, after=after)), async_op)


def reduce_scatter(output: Tensor, input_list: list[Tensor], op: ReduceOp = ReduceOp.SUM, group: Any = None,
                   async_op: bool = False) -> Work | None:
    """Reduce the i-th tensor of every rank's `input_list` into `output` of rank i."""
    pg = resolve(group)
    if not isinstance(input_list, list) or len(input_list) != pg.size():
        raise ValueError(f"reduce_scatter: input_list must be a list of {pg.size()} tensors (the group's size)")
    for i, t in enumerate(input_list):
        _same_as(t, output, f"input_list[{i}]")
    from runtime import opcall

    flat = opcall.api.cat([t.reshape(-1) for t in input_list])
    return reduce_scatter_tensor(output, flat, op, group, async_op)


def gather(tensor: Tensor, gather_list: list[Tensor] | None = None, dst: int | None = None, group: Any = None,
           async_op: bool = False, group_dst: int | None = None) -> Work | None:
    """Every rank's `tensor` into `gather_list` on rank `dst` (None elsewhere)."""
    pg = resolve(group)
    root = _root(pg, dst if dst is not None or group_dst is not None else pg.ranks[0], group_dst, "dst")
    s = _stage(tensor, pg, "gather's tensor")
    mine = pg.rank() == root
    if mine:
        if not isinstance(gather_list, list) or len(gather_list) != pg.size():
            raise ValueError(f"gather: the destination rank needs gather_list, a list of {pg.size()} tensors")
        for i, t in enumerate(gather_list):
            _same_as(t, tensor, f"gather_list[{i}]")
    elif gather_list:
        raise ValueError("gather: gather_list must be None or empty on ranks other than dst")
    _check_agree(pg, "gather", [tensor], root)
    recv = np.empty((pg.size(), s.array.size), dtype=s.array.dtype) if mine else None
    after = None
    if mine:
        outs = [_stage(t, pg, f"gather_list[{i}]") for i, t in enumerate(gather_list or [])]

        def after() -> None:
            for out, row in zip(outs, recv, strict=True):  # type: ignore[arg-type]
                out.array[...] = row
                out.store()
    return _run(pg.comm.gather(s.array, recv, root, after), async_op)


def scatter(tensor: Tensor, scatter_list: list[Tensor] | None = None, src: int | None = None, group: Any = None,
            async_op: bool = False, group_src: int | None = None) -> Work | None:
    """The i-th tensor of `scatter_list` on rank `src` into `tensor` of rank i."""
    pg = resolve(group)
    root = _root(pg, src if src is not None or group_src is not None else pg.ranks[0], group_src, "src")
    out = _stage(tensor, pg, "scatter's tensor")
    send = None
    if pg.rank() == root:
        if not isinstance(scatter_list, list) or len(scatter_list) != pg.size():
            raise ValueError(f"scatter: the source rank needs scatter_list, a list of {pg.size()} tensors")
        for i, t in enumerate(scatter_list):
            _same_as(t, tensor, f"scatter_list[{i}]")
        send = np.concatenate([_stage(t, pg, f"scatter_list[{i}]").array for i, t in enumerate(scatter_list)])
    elif scatter_list:
        raise ValueError("scatter: scatter_list must be None or empty on ranks other than src")
    _check_agree(pg, "scatter", [tensor], root)
    return _run(pg.comm.scatter(send, out.array, root, _finish(out)), async_op)


def _splits(sizes: Sequence[int] | None, t: Tensor, n: int, what: str) -> list[int]:
    rows = t.shape[0] if t.dim() else 1
    per_row = t.numel() // rows if rows else 0
    if sizes is None or len(sizes) == 0:
        if rows % n:
            raise ValueError(f"all_to_all_single: {what}'s first dimension {rows} does not split evenly over {n} "
                             f"ranks; give {what}_split_sizes")
        return [rows // n * per_row] * n
    if len(sizes) != n or sum(int(s) for s in sizes) != rows:
        raise ValueError(f"all_to_all_single: {what}_split_sizes {list(sizes)} must have {n} entries summing to "
                         f"{what}'s first dimension {rows}")
    return [int(s) * per_row for s in sizes]


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes: Sequence[int] | None = None,
                      input_split_sizes: Sequence[int] | None = None, group: Any = None,
                      async_op: bool = False) -> Work | None:
    """Split `input` along dim 0 and send part i to rank i; receive each rank's part into `output`."""
    pg = resolve(group)
    if output.dtype != input.dtype:
        raise TypeError(f"all_to_all_single: output is {output.dtype}, input {input.dtype}")
    send_counts = _splits(input_split_sizes, input, pg.size(), "input")
    recv_counts = _splits(output_split_sizes, output, pg.size(), "output")
    s = _stage(input, pg, "all_to_all_single's input")
    out = _stage(output, pg, "all_to_all_single's output")
    return _run(pg.comm.alltoallv(s.array, send_counts, out.array, recv_counts, _finish(out)), async_op)


def all_to_all(output_tensor_list: list[Tensor], input_tensor_list: list[Tensor], group: Any = None,
               async_op: bool = False) -> Work | None:
    """Send `input_tensor_list[i]` to rank i and receive rank i's into `output_tensor_list[i]`."""
    pg = resolve(group)
    n = pg.size()
    if len(output_tensor_list) != n or len(input_tensor_list) != n:
        raise ValueError(f"all_to_all: both lists must hold {n} tensors (the group's size)")
    ins = [_stage(t, pg, f"input_tensor_list[{i}]") for i, t in enumerate(input_tensor_list)]
    outs = [_stage(t, pg, f"output_tensor_list[{i}]") for i, t in enumerate(output_tensor_list)]
    dtypes = {s.array.dtype for s in ins + outs}
    if len(dtypes) != 1:
        raise TypeError("all_to_all: every tensor of both lists must have one dtype")
    send = np.concatenate([s.array for s in ins])
    recv = np.empty(sum(s.array.size for s in outs), dtype=send.dtype)

    def after() -> None:
        offset = 0
        for out in outs:
            out.array[...] = recv[offset:offset + out.array.size]
            offset += out.array.size
            out.store()
    return _run(pg.comm.alltoallv(send, [s.array.size for s in ins], recv, [s.array.size for s in outs], after),
                async_op)


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> Work | None:
    """Wait until every rank of the group has reached this call."""
    return _run(resolve(group).comm.barrier(), async_op)


# -- point to point -----------------------------------------------------------------------------------
def isend(tensor: Tensor, dst: int | None = None, group: Any = None, tag: int = 0,
          group_dst: int | None = None) -> Work:
    pg = resolve(group)
    peer = _root(pg, dst, group_dst, "dst")
    if peer == pg.rank():
        raise ValueError("Invalid destination rank: destination rank should not be the same as the rank of the "
                         "current process.")
    s = _stage(tensor, pg, "isend's tensor")
    return pg.comm.send(s.array.copy() if s.copy else s.array, peer, int(tag))


def irecv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0,
          group_src: int | None = None) -> Work:
    pg = resolve(group)
    peer = None if src is None and group_src is None else _root(pg, src, group_src, "src")
    s = _stage(tensor, pg, "irecv's tensor")

    def finish(source: int) -> int:
        s.store()
        return pg.ranks[source]
    return pg.comm.recv(s.array, peer, int(tag), finish)


def send(tensor: Tensor, dst: int | None = None, group: Any = None, tag: int = 0,
         group_dst: int | None = None) -> None:
    isend(tensor, dst, group, tag, group_dst).wait()


def recv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receive into `tensor` (from any rank when `src` is None); returns the sender's global rank."""
    work = irecv(tensor, src, group, tag, group_src)
    return int(work.result()[0])


# -- picklable objects (trusted peers only: unpickling runs code) ------------------------------------
def _pickled(obj: Any) -> np.ndarray:
    return np.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), dtype=np.uint8)


def all_gather_object(object_list: list[Any], obj: Any, group: Any = None) -> None:
    """Every rank's `obj` into `object_list` (pickled: use it only between trusted peers)."""
    pg = resolve(group)
    if not isinstance(object_list, list) or len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list must be a list of {pg.size()} entries (the group's size)")
    mpi = pg.mpi  # type: ignore[attr-defined]
    data = _pickled(obj)
    sizes = np.zeros(pg.size(), dtype=np.int64)
    mpi.allgather(np.array([data.size], dtype=np.int64), sizes, name="all_gather_object (sizes)").wait()
    recv = np.empty(int(sizes.sum()), dtype=np.uint8)
    mpi.allgatherv(data, recv, sizes, name="all_gather_object").wait()
    offset = 0
    for i, n in enumerate(sizes):
        object_list[i] = pickle.loads(recv[offset:offset + n].tobytes())
        offset += int(n)


def broadcast_object_list(object_list: list[Any], src: int | None = None, group: Any = None, device: Any = None,
                          group_src: int | None = None) -> None:
    """The objects of rank `src`'s `object_list` into every rank's list, in place (pickled: trusted peers)."""
    pg = resolve(group)
    root = _root(pg, src if src is not None or group_src is not None else pg.ranks[0], group_src, "src")
    mpi = pg.mpi  # type: ignore[attr-defined]
    data = _pickled(list(object_list)) if pg.rank() == root else np.empty(0, dtype=np.uint8)
    size = np.array([data.size], dtype=np.int64)
    mpi.broadcast(size, root).wait()
    if pg.rank() != root:
        data = np.empty(int(size[0]), dtype=np.uint8)
    mpi.broadcast(data, root).wait()
    values = pickle.loads(data.tobytes())
    if len(values) != len(object_list):
        raise ValueError(f"broadcast_object_list: rank {pg.ranks[root]} sent {len(values)} objects but this rank's "
                         f"list holds {len(object_list)}")
    object_list[:] = values
