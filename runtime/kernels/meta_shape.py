"""Meta kernels of the shape ops that copy (cat, repeat, roll, flip, tril, triu) and of the indexing ops
(index, index_put, gather, scatter, index_select, index_add, embedding, one_hot, searchsorted, bucketize,
isin, histc) (Note [Meta tensors] in runtime/meta_array.py). The ops whose output shape depends on the
values (nonzero, unique, bincount, a boolean mask index, one_hot without num_classes) raise
`DataDependentOutputError` naming the op, as PyTorch's meta kernels refuse them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

from runtime import dtypes
from runtime import strides as S
from runtime.kernels._xp import result_type
from runtime.kernels.index_ops import _INT, _check_index
from runtime.kernels.meta_pointwise import empty
from runtime.kernels.views import int_list
from runtime.tensor import Tensor


class DataDependentOutputError(RuntimeError):
    """An op whose output shape depends on its input's values was called on meta tensors."""


def data_dependent(op: str) -> NoReturn:
    raise DataDependentOutputError(f"{op}: the shape of its output depends on the values of its input, which a "
                                   f"meta tensor does not have; run it on a device with data")


def _shape(t: Tensor) -> tuple[int, ...]:
    return tuple(t._data.shape)


def _same(self: Tensor, dt: dtypes.DType | None = None) -> Tensor:
    return empty(_shape(self), self._dtype if dt is None else dt)


# -- shape ops ---------------------------------------------------------------------------------------
def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    if len(tensors) == 0:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    dt = result_type(*tensors)
    parts = [t for t in tensors if not (t.dim() == 1 and t.shape[0] == 0)]
    if not parts:
        return _same(tensors[0], dt)
    ref = parts[0]
    if ref.dim() == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = S.wrap_dim(dim, ref.dim())
    for i, t in enumerate(parts):
        if t.dim() != ref.dim():
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.dim()} and {t.dim()}")
        for k in range(ref.dim()):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {t.shape[k]} for tensor number {i} in the list.")
    shape = list(_shape(ref))
    shape[d] = sum(t.shape[d] for t in parts)
    return empty(tuple(shape), dt)


def repeat(self: Tensor, repeats: Sequence[int]) -> Tensor:
    reps = int_list(repeats, "repeat", "repeats")
    if len(reps) < self.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    if any(r < 0 for r in reps):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(reps)}")
    shape = (1,) * (len(reps) - self.dim()) + _shape(self)
    return empty(tuple(n * r for n, r in zip(shape, reps, strict=True)), self._dtype)


def roll(self: Tensor, shifts: Sequence[int], dims: Sequence[int] = ()) -> Tensor:
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims)
    if not dims and len(shifts) != 1:
        raise RuntimeError(f"`shifts` required to be of size 1 when `dims` is empty, got {len(shifts)}")
    if dims and len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    for d in dims:
        S.wrap_dim(d, self.dim())
    return _same(self)


def flip(self: Tensor, dims: Sequence[int]) -> Tensor:
    axes = tuple(S.wrap_dim(d, self.dim()) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"dim {axes} appears multiple times in the list of dims")
    return _same(self)


def tril(self: Tensor, diagonal: int = 0) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return _same(self)


def triu(self: Tensor, diagonal: int = 0) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return _same(self)


# -- indexing ----------------------------------------------------------------------------------------
def _indexed_shape(self: Tensor, indices: Sequence[Tensor | None]) -> tuple[int, ...]:
    """The shape of `self[indices]` for PyTorch's advanced indexing by integer tensors (None: a whole dim)."""
    shape = _shape(self)
    idx = list(indices)
    for t in idx:  # a mask (of any rank, a 0-dim one included) selects as many elements as it holds Trues
        if t is not None and (t._dtype is dtypes.bool_ or t._dtype is dtypes.uint8):
            data_dependent("index with a boolean mask")
        if t is not None and t._dtype.is_floating_point:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if len(idx) > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)} (got {len(idx)})")
    idx += [None] * (len(shape) - len(idx))
    positions = [i for i, t in enumerate(idx) if t is not None]
    if not positions:
        return shape
    try:
        bshape = tuple(S.broadcast_shapes(*(_shape(idx[i]) for i in positions)))
    except RuntimeError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         f"{', '.join(str(list(_shape(idx[i]))) for i in positions)}") from None
    if positions == list(range(positions[0], positions[-1] + 1)):
        return shape[:positions[0]] + bshape + shape[positions[-1] + 1:]
    return bshape + tuple(n for i, n in enumerate(shape) if idx[i] is None)


def _indexes_meta(op: str, self: Tensor) -> None:
    """index and index_put take CPU index tensors (and values) beside a meta `self` (`device_check: NoCheck`),
    so this kernel also runs for a call whose meta tensor is an index or the values; then `self` is a tensor
    with data that a meta tensor cannot read from or write into: a device mismatch."""
    if self._device.type != "meta":
        raise RuntimeError(f"{op}: expected all tensors to be on the same device, but found at least two "
                           f"devices, {self._device} (self) and meta (an index or the values)")


def index(self: Tensor, indices: Sequence[Tensor | None]) -> Tensor:
    _indexes_meta("index", self)
    return empty(_indexed_shape(self, indices), self._dtype)


def _check_put(self: Tensor, indices: Sequence[Tensor | None], values: Tensor) -> None:
    """`values` must broadcast to the selection; a boolean mask selects a number of elements that only its
    values tell, so then nothing more is checked."""
    if any(t is not None and t._dtype in (dtypes.bool_, dtypes.uint8) for t in indices):
        return
    S.broadcast_shapes(_shape(values), _indexed_shape(self, indices))


def index_put(self: Tensor, indices: Sequence[Tensor | None], values: Tensor, accumulate: bool = False) -> Tensor:
    _indexes_meta("index_put", self)
    _check_put(self, indices, values)
    return _same(self)


def index_put_(self: Tensor, indices: Sequence[Tensor | None], values: Tensor, accumulate: bool = False) -> Tensor:
    _indexes_meta("index_put_", self)
    _check_put(self, indices, values)
    return self


def index_select(self: Tensor, dim: int, index: Tensor) -> Tensor:
    _check_index(index, "index_select", (dtypes.int64, dtypes.int32))
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    shape = list(_shape(self))
    if not shape:
        S.wrap_dim(dim, 0)
        return empty((), self._dtype)
    shape[S.wrap_dim(dim, len(shape))] = index.numel()
    return empty(tuple(shape), self._dtype)


def index_add(self: Tensor, dim: int, index: Tensor, source: Tensor, alpha: Any = 1) -> Tensor:
    _check_index(index, "index_add", (dtypes.int64, dtypes.int32))
    S.wrap_dim(dim, max(self.dim(), 1))
    return _same(self)


def _check_scatter(self: Tensor, index: Tensor, d: int, op: str, src: Tensor | None = None) -> None:
    """The CPU kernels' checks of a gather/scatter index (runtime/kernels/index_ops.py) but its values."""
    _check_index(index, op, _INT)
    if index.dim() != self.dim() and not (index.dim() <= 1 and self.dim() <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    for k in range(index.dim()):
        if k != d and index.shape[k] > self.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(index.shape)} to be "
                               f"smaller than self {list(self.shape)} apart from dimension {d}")
        if src is not None and src.dim() and index.shape[k] > src.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(index.shape)} to be "
                               f"smaller than src {list(src.shape)}")


def gather(self: Tensor, dim: int, index: Tensor, sparse_grad: bool = False) -> Tensor:
    d = S.wrap_dim(dim, self.dim() or 1)
    if self.dim() and index.dim() != self.dim() and index.numel():
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    _check_scatter(self, index, 0 if not self.dim() else d, "gather")
    return empty(_shape(index), self._dtype)


def _scatter(self: Tensor, dim: int, index: Tensor, op: str, src: Tensor | None = None) -> Tensor:
    d = S.wrap_dim(dim, self.dim() or 1)
    _check_scatter(self, index, d, op, src)
    return _same(self)


def scatter_src(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return _scatter(self, dim, index, "scatter", src)


def scatter_value(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    return _scatter(self, dim, index, "scatter")


def scatter_add(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return _scatter(self, dim, index, "scatter_add", src)


def scatter_reduce_two(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
                       include_self: bool = True) -> Tensor:
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    return _scatter(self, dim, index, "scatter_reduce", src)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if indices._dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {indices._dtype.name} instead")
    return empty(_shape(indices) + (weight.shape[1],), weight._dtype)


def one_hot(self: Tensor, num_classes: int = -1) -> Tensor:
    if self._dtype is not dtypes.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        data_dependent("one_hot without num_classes")
    return empty(_shape(self) + (num_classes,), dtypes.int64)


def _index_dtype(out_int32: bool) -> dtypes.DType:
    return dtypes.int32 if out_int32 else dtypes.int64


def searchsorted_Tensor(sorted_sequence: Tensor, self: Tensor, out_int32: bool = False, right: bool = False,
                        side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    return empty(_shape(self), _index_dtype(out_int32))


def searchsorted_Scalar(sorted_sequence: Tensor, self: Any, out_int32: bool = False, right: bool = False,
                        side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    return empty((), _index_dtype(out_int32))


def bucketize(self: Tensor, boundaries: Tensor, out_int32: bool = False, right: bool = False) -> Tensor:
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return empty(_shape(self), _index_dtype(out_int32))


def isin_Tensor_Tensor(elements: Tensor, test_elements: Tensor, assume_unique: bool = False,
                       invert: bool = False) -> Tensor:
    return empty(_shape(elements), dtypes.bool_)


def isin_Tensor_Scalar(elements: Tensor, test_element: Any, assume_unique: bool = False,
                       invert: bool = False) -> Tensor:
    return empty(_shape(elements), dtypes.bool_)


def isin_Scalar_Tensor(element: Any, test_elements: Tensor, assume_unique: bool = False,
                       invert: bool = False) -> Tensor:
    return empty((), dtypes.bool_)


def histc(self: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:
    if bins <= 0:
        raise RuntimeError(f"torch.histc: bins must be > 0, but got {bins} for dimension 0")
    if not self._dtype.is_floating_point:
        raise RuntimeError(f"\"histogram_cpu\" not implemented for '{self._dtype.name}'")
    return empty((bins,), self._dtype)


def nonzero(self: Tensor) -> NoReturn:
    data_dependent("nonzero")


def unique(self: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: int | None = None) -> NoReturn:
    data_dependent("unique")


def bincount(self: Tensor, weights: Tensor | None = None, minlength: int = 0) -> NoReturn:
    data_dependent("bincount")
