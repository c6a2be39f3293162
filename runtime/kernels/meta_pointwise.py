"""Meta kernels of the pointwise ops (Note [Meta tensors] in runtime/meta_array.py): what the generated
kernels of generated/_meta_kernels.py call. The dtype is `cpu_pointwise.result_dtype`, the CPU kernels'
own promotion; the shape is the broadcast of the inputs; the strides are those PyTorch's TensorIterator
gives its output (Note [Pointwise output strides] in runtime/kernels/dense_copy.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from runtime import dtypes
from runtime import strides as S
from runtime.device import META
from runtime.dispatcher import META_BIT
from runtime.kernels.cpu_pointwise import result_dtype
from runtime.kernels.dense_copy import pointwise_strides
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


def output_strides(shape: tuple[int, ...], tensors: Sequence[Tensor]) -> tuple[int, ...]:
    """The strides of a pointwise output of `tensors` (Note [Pointwise output strides] in dense_copy.py)."""
    return pointwise_strides(shape, [t._data for t in tensors])


def _ordered(tensors: Sequence[Tensor]) -> list[Tensor]:
    return [t for t in tensors if isinstance(t, Tensor)]


def new(op: str, dt: dtypes.DType, tensors: Sequence[Tensor], row_major: bool = False) -> Tensor:
    """The output of a functional pointwise op of `tensors`, in dtype `dt`; `row_major` for the ops whose
    result is row-major whatever the inputs' layout (codegen/pointwise_kernel.py ROW_MAJOR_RESULTS)."""
    ts = _ordered(tensors)
    shape = broadcast(op, ts)
    return empty(shape, dt, None if row_major else output_strides(shape, ts))


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
