"""Indexing kernels (CompositeExplicitAutograd, NumPy or CuPy): index_select, index_add, gather, scatter,
scatter_add, embedding, one_hot. (Advanced indexing `index`/`index_put` lives in runtime/kernels/index.py.)"""

from __future__ import annotations

from typing import Any

from runtime import dtypes
from runtime import strides as S
from runtime.kernels._xp import scatter_add_at, wrap, xp_of
from runtime.tensor import Tensor

_INT = (dtypes.int64, dtypes.int32)


def _check_index(index: Tensor, op: str, allowed: tuple[dtypes.DType, ...] = (dtypes.int64,)) -> None:
    if index._dtype not in allowed:
        raise RuntimeError(f"{op}(): Expected dtype int64 for index")


def _bounds(idx: Any, size: int, op: str, error: type[Exception] = RuntimeError) -> None:
    """Indices must lie in [-size, size): PyTorch raises RuntimeError (gather, scatter, index_add) or
    IndexError (index_select, embedding) otherwise."""
    if idx.size and (bool((idx < -size).any()) or bool((idx >= size).any())):
        bad = idx[(idx < -size) | (idx >= size)].reshape(-1)[0]
        raise error(f"{op}(): index {int(bad)} is out of bounds for dimension with size {size}")


def index_select(self: Tensor, dim: int, index: Tensor) -> Tensor:
    _check_index(index, "index_select", _INT)
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    a = self._data
    if a.ndim == 0:
        S.wrap_dim(dim, 0)
        _bounds(index._data, 1, "index_select", IndexError)
        return wrap(a.reshape(1)[index._data.reshape(-1)].reshape(()), a, self._dtype)  # 0-d, as PyTorch
    d = S.wrap_dim(dim, a.ndim)
    idx = index._data.reshape(-1)
    _bounds(idx, a.shape[d], "index_select", IndexError)
    return wrap(xp_of(a).take(a, idx, axis=d), a, self._dtype)


def index_add(self: Tensor, dim: int, index: Tensor, source: Tensor, alpha: Any = 1) -> Tensor:
    _check_index(index, "index_add", _INT)
    a = self._data.copy()
    xp = xp_of(a)
    if a.ndim == 0:
        a = a.reshape(1)
        src = source._data.reshape(1, *source.shape[1:]) if source.dim() else source._data.reshape(1)
    else:
        src = source._data
    d = S.wrap_dim(dim, a.ndim)
    idx = index._data.reshape(-1)
    _bounds(idx, a.shape[d], "index_add")
    if src.ndim and src.shape[d] != idx.shape[0]:
        raise RuntimeError(f"index_add_(): Number of indices ({idx.shape[0]}) should be equal to source.size(dim): "
                           f"({src.shape[d]}), for dim: {d}")
    src = src * alpha if alpha != 1 else src
    scatter_add_at(xp, xp.moveaxis(a, d, 0), (idx,), xp.moveaxis(src.astype(a.dtype, copy=False), d, 0))
    return wrap(a.reshape(self.shape), a, self._dtype)


def _grid(xp: Any, index: Any, d: int) -> tuple[Any, ...]:
    """The index tuple that addresses, for every element of `index`, its position with dim `d` replaced."""
    grids = list(xp.meshgrid(*[xp.arange(n) for n in index.shape], indexing="ij", sparse=True))
    grids[d] = index
    return tuple(grids)


def _prefix(a: Any, shape: tuple[int, ...], skip: int | None = None) -> Any:
    """`a` cut to the leading `shape` in every dim but `skip`."""
    return a[tuple(slice(None) if k == skip else slice(0, n) for k, n in enumerate(shape))]


def _check_scatter(self: Tensor, index: Tensor, d: int, op: str, src: Tensor | None = None) -> None:
    _check_index(index, op, _INT)
    if index.dim() != self.dim() and not (index.dim() <= 1 and self.dim() <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    for k in range(index.dim()):
        if k != d and index.shape[k] > self.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(index.shape)} to be "
                               f"smaller than self {list(self.shape)} apart from dimension {d}")
        if src is not None and index.shape[k] > src.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(index.shape)} to be "
                               f"smaller than src {list(src.shape)}")
    _bounds(index._data, self.shape[d] if self.dim() else 1, op)
    if index._data.size and bool((index._data < 0).any()):
        bad = int(index._data[index._data < 0].reshape(-1)[0])
        raise RuntimeError(f"{op}(): index {bad} is out of bounds for dimension {d} with size "
                           f"{self.shape[d] if self.dim() else 1}")


def gather(self: Tensor, dim: int, index: Tensor, sparse_grad: bool = False) -> Tensor:
    a = self._data
    d = S.wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        _check_scatter(self, index, 0, "gather")
        return wrap(a.reshape(1)[index._data], a, self._dtype)
    if index.dim() != a.ndim and index._data.size:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for k in range(index.dim()):
        if k != d and index.shape[k] > self.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(index.shape)} to be "
                               f"smaller than self {list(self.shape)} apart from dimension {d}")
    _check_scatter(self, index, d, "gather")
    xp = xp_of(a)
    out = xp.take_along_axis(_prefix(a, index.shape, d), index._data, axis=d)
    return wrap(xp.ascontiguousarray(out), a, self._dtype)  # row-major, as PyTorch's


def _scatter(self: Tensor, dim: int, index: Tensor, values: Any, add: bool, op: str,
             src: Tensor | None = None) -> Tensor:
    out = self._data.copy()
    flat = out.ndim == 0
    if flat:
        out = out.reshape(1)
    d = S.wrap_dim(dim, out.ndim)
    _check_scatter(self, index, d, op, src)
    xp = xp_of(out)
    idx = index._data.reshape(-1) if flat else index._data
    if idx.size:
        key = _grid(xp, idx, d)
        if src is not None:
            values = _prefix(values.reshape(-1) if flat else values, idx.shape).astype(out.dtype, copy=False)
        if add:
            scatter_add_at(xp, out, key, values if src is not None else xp.full(idx.shape, values, out.dtype))
        else:
            out[key] = values
    return wrap(out.reshape(self.shape), out, self._dtype)


def scatter_src(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    if src._wrapped:  # `scatter(x, d, i, 1.0)`: the binding made the number a tensor; it is scatter.value
        return scatter_value(self, dim, index, src._data.item())
    return _scatter(self, dim, index, src._data, False, "scatter", src)


def scatter_value(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    return _scatter(self, dim, index, value, False, "scatter")


def scatter_add(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return _scatter(self, dim, index, src._data, True, "scatter_add", src)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if indices._dtype not in _INT:
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {indices._dtype.name} instead")
    a = weight._data
    _bounds(indices._data, a.shape[0], "embedding", IndexError)
    return wrap(xp_of(a).take(a, indices._data, axis=0), a, weight._dtype)


def one_hot(self: Tensor, num_classes: int = -1) -> Tensor:
    if self._dtype is not dtypes.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    a = self._data
    xp = xp_of(a)
    if num_classes == -1:
        if a.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(a.max()) + 1
    if a.size and bool((a < 0).any()):
        raise RuntimeError("Class values must be non-negative.")
    if a.size and int(a.max()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    r = (a[..., None] == xp.arange(num_classes)).astype(xp.int64, order="C")  # row-major, as PyTorch's
    return wrap(r, a, dtypes.int64)
