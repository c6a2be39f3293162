"""Meta kernels of the pointwise ops (Note [Meta tensors] in runtime/meta_array.py): what the generated
kernels of generated/_meta_kernels.py call. The dtype is `cpu_pointwise.result_dtype`, the CPU kernels'
own promotion; the shape is the broadcast of the inputs; the strides are those PyTorch's TensorIterator
gives its output (Note [Pointwise output strides]).
"""

from __future__ import annotations

from collections.abc import Sequence

from runtime import dtypes
from runtime import strides as S
from runtime.device import META
from runtime.dispatcher import META_BIT
from runtime.kernels.cpu_pointwise import result_dtype
from runtime.meta_array import meta_array
from runtime.storage import MAX_DIMS
from runtime.tensor import Tensor, fresh_tensor

__all__ = ["result_dtype", "new", "inplace", "out", "empty", "output_strides", "broadcast"]


def empty(shape: Sequence[int], dt: dtypes.DType, strides: Sequence[int] | None = None) -> Tensor:
    """A new meta tensor of `shape` and `dt` (contiguous unless `strides` are given)."""
    shape = tuple(int(n) for n in shape)
    if len(shape) > MAX_DIMS:
        raise RuntimeError(f"a tensor of {len(shape)} dimensions was requested: opgen tensors have at most "
                           f"{MAX_DIMS} (NumPy's limit)")
    strides = S.contiguous_strides(shape) if strides is None else tuple(strides)
    np_dtype = dt.np if dt.np is not None else "uint16"  # bfloat16's bits
    return fresh_tensor(meta_array(shape, strides, np_dtype), dt, META, META_BIT)


def broadcast(op: str, tensors: Sequence[Tensor]) -> tuple[int, ...]:
    try:
        return tuple(S.broadcast_shapes(*(tuple(t._data.shape) for t in tensors)))
    except RuntimeError as e:
        raise RuntimeError(f"{op}: {e}") from None


# Note [Pointwise output strides]
# A pointwise op's output follows its inputs' layout, as PyTorch's TensorIterator lays it out: the dims
# are ordered from the fastest-moving to the slowest by comparing the inputs' strides (broadcast to the
# output's shape), the first input that tells two dims apart deciding; dims no input tells apart keep
# their order. The output is dense in that order: a transposed input gives a transposed output, a
# channels-last one a channels-last output, contiguous inputs a contiguous output.
def output_strides(shape: tuple[int, ...], tensors: Sequence[Tensor]) -> tuple[int, ...]:
    n = len(shape)
    if n <= 1:
        return S.contiguous_strides(shape)
    if all(t._data.shape == shape and t._data.flags.c_contiguous for t in tensors):
        return S.contiguous_strides(shape)
    operand_strides = []  # in bytes, as TensorIterator compares them; 0 along a broadcast dim
    for t in tensors:
        tshape = t._data.shape
        lead = n - len(tshape)
        operand_strides.append([0] * lead + [0 if m == 1 and shape[lead + i] != 1 else s
                                             for i, (m, s) in enumerate(zip(tshape, t._data.strides, strict=True))])

    def should_swap(d0: int, d1: int) -> int:
        for st in operand_strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    return S.dense_in_order(shape, should_swap)


def _ordered(tensors: Sequence[Tensor]) -> list[Tensor]:
    return [t for t in tensors if isinstance(t, Tensor)]


def new(op: str, dt: dtypes.DType, tensors: Sequence[Tensor]) -> Tensor:
    """The output of a functional pointwise op of `tensors`, in dtype `dt`."""
    ts = _ordered(tensors)
    shape = broadcast(op, ts)
    return empty(shape, dt, output_strides(shape, ts))


def inplace(op: str, target: Tensor, dt: dtypes.DType, tensors: Sequence[Tensor]) -> Tensor:
    """An in-place pointwise op into `target`, checked as the CPU kernels check it (nothing is written)."""
    if not dtypes.can_cast(dt, target._dtype):
        raise RuntimeError(f"{op}: result type {dt.name} can't be cast to the desired output type "
                           f"{target._dtype.name}")
    shape = broadcast(op, _ordered(tensors))
    if shape != tuple(target._data.shape):
        raise RuntimeError(f"{op}: output with shape {list(target.shape)} doesn't match the broadcast shape "
                           f"{list(shape)}")
    return target


def out(op: str, target: Tensor, dt: dtypes.DType, tensors: Sequence[Tensor]) -> Tensor:
    """An out= pointwise op into `target`: checked, and resized when its shape differs (as the CPU kernels)."""
    if not dtypes.can_cast(dt, target._dtype):
        raise RuntimeError(f"{op}: result type {dt.name} can't be cast to the desired output type "
                           f"{target._dtype.name}")
    ts = _ordered(tensors)
    shape = broadcast(op, ts)
    resize_out(op, target, shape, output_strides(shape, ts))
    return target


def resize_out(op: str, target: Tensor, shape: tuple[int, ...], strides: Sequence[int] | None = None) -> None:
    """Give a meta `out=` tensor of another shape the new geometry (PyTorch warns when it had elements)."""
    if tuple(target._data.shape) == tuple(shape):
        return
    if target._data.size != 0:
        import warnings
        warnings.warn(f"{op}: an output with one or more elements was resized since it had shape "
                      f"{list(target.shape)}, which does not match the required output shape {list(shape)}.",
                      UserWarning, stacklevel=4)
    target._data = empty(shape, target._dtype, strides)._data
    target._storage = None
