"""More CompositeImplicitAutograd ops for PyTorch compatibility, built from existing ops (autograd comes
free): flips and stacks (`fliplr`, `hstack`, `atleast_2d`), views under other names (`swapaxes`,
`broadcast_to`, `unfold`), `clamp_min`/`clamp_max`, `cumprod`, `take`, `nansum`, `aminmax`,
`std_mean`/`var_mean`, and the in-place forms of the index ops (`scatter_`, `index_add_`, `index_fill_`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runtime import dtypes, opcall
from runtime import strides as S
from runtime.kernels.checks import check_zero_dim
from runtime.kernels.reduce import acc_dtype


def _G() -> Any:
    return opcall.api  # the generated package (Note [The runtime reaches generated/ through opcall])


def _need_dims(op: str, self: Any, n: int) -> None:
    if self.dim() < n:
        raise RuntimeError(f"Input must be >= {n}-d.")


# -- flips and stacks ----------------------------------------------------------------------------------

def fliplr(self: Any) -> Any:
    _need_dims("fliplr", self, 2)
    return _G().flip(self, [1])


def flipud(self: Any) -> Any:
    _need_dims("flipud", self, 1)
    return _G().flip(self, [0])


def atleast_1d(self: Any) -> Any:
    return self.reshape(1) if self.dim() == 0 else self


def atleast_2d(self: Any) -> Any:
    return self.reshape(1, -1) if self.dim() < 2 else self


def atleast_3d(self: Any) -> Any:
    if self.dim() == 0:
        return self.reshape(1, 1, 1)
    if self.dim() == 1:
        return self.reshape(1, -1, 1)
    if self.dim() == 2:
        return self.unsqueeze(-1)
    return self


def atleast_1d_sequence(self: Sequence[Any]) -> tuple[Any, ...]:
    """atleast_1d of each tensor of a list or tuple, as a tuple (PyTorch's atleast_1d.Sequence)."""
    return tuple(atleast_1d(t) for t in self)


def atleast_2d_sequence(self: Sequence[Any]) -> tuple[Any, ...]:
    """atleast_2d of each tensor of a list or tuple, as a tuple."""
    return tuple(atleast_2d(t) for t in self)


def atleast_3d_sequence(self: Sequence[Any]) -> tuple[Any, ...]:
    """atleast_3d of each tensor of a list or tuple, as a tuple."""
    return tuple(atleast_3d(t) for t in self)


def hstack(tensors: Sequence[Any]) -> Any:
    ts = [atleast_1d(t) for t in tensors]
    return _G().cat(ts, 0 if ts and ts[0].dim() == 1 else 1)


def vstack(tensors: Sequence[Any]) -> Any:
    return _G().cat([atleast_2d(t) for t in tensors], 0)


def dstack(tensors: Sequence[Any]) -> Any:
    return _G().cat([atleast_3d(t) for t in tensors], 2)


def column_stack(tensors: Sequence[Any]) -> Any:
    return _G().cat([t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors], 1)


# -- views under other names ---------------------------------------------------------------------------

def swapaxes(self: Any, axis0: int, axis1: int) -> Any:
    return self.transpose(axis0, axis1)


def broadcast_to(self: Any, size: Sequence[int]) -> Any:
    return self.expand(size)


def unfold(self: Any, dimension: int, size: int, step: int) -> Any:
    """Slices of length `size` every `step` along `dimension`, as a new last dim: a view (as_strided)."""
    n = self.dim()
    d = S.wrap_dim(dimension, max(n, 1))
    length = self.shape[d] if n else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    shape, stride = list(self.shape), list(self.stride())
    if n == 0:
        return self.as_strided([size], [1], self.storage_offset())
    shape[d] = (length - size) // step + 1
    inner = stride[d]
    stride[d] = inner * step
    return self.as_strided(shape + [size], stride + [inner], self.storage_offset())


# -- pointwise and reductions --------------------------------------------------------------------------

def clamp_min(self: Any, min: Any) -> Any:
    return _G().clamp(self, min=min)


def clamp_max(self: Any, max: Any) -> Any:
    return _G().clamp(self, max=max)


def clamp_min_(self: Any, min: Any) -> Any:
    return _G().clamp_(self, min=min)


def clamp_max_(self: Any, max: Any) -> Any:
    return _G().clamp_(self, max=max)


def cumprod(self: Any, dim: int, dtype: Any = None) -> Any:
    """Running products as a chain of multiplications, so the gradient is exact where the input has zeros."""
    G = _G()
    x = self.to(acc_dtype(self, dtype))  # integers and bools multiply in int64, as PyTorch
    d = S.wrap_dim(dim, max(x.dim(), 1))
    if x.dim() == 0:
        return x.clone()
    if x.shape[d] == 0:
        return x.clone()
    acc = x.select(d, 0)
    parts = [acc]
    for i in range(1, x.shape[d]):
        acc = acc * x.select(d, i)
        parts.append(acc)
    return G.stack(parts, d)


def take(self: Any, index: Any) -> Any:
    if index.dtype is not dtypes.int64:  # unlike index_select, take accepts no int32 index (as PyTorch)
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {index.dtype.name}")
    flat = self.reshape(-1)
    n = flat.shape[0]
    if index.numel() and not index.is_meta and (int(index.max()) >= n or int(index.min()) < -n):  # meta: no values
        raise IndexError(f"out of range: tried to access index {int(index.max())} on a tensor of {n} elements.")
    idx = index.reshape(-1)
    idx = _G().where(idx < 0, idx + n, idx)
    return flat.index_select(0, idx).reshape(index.shape)


def argwhere(self: Any) -> Any:
    return _G().nonzero(self)


def nansum(self: Any, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    G = _G()
    clean = G.where(G.isnan(self), G.zeros_like(self), self) if self.is_floating_point() else self
    if dim is None:
        return clean.sum(dtype=dtype)
    return clean.sum(dim, keepdim, dtype=dtype)


def aminmax(self: Any, dim: int | None = None, keepdim: bool = False) -> tuple[Any, Any]:
    G = _G()
    if dim is None:
        lo, hi = G.amin(self, [], keepdim), G.amax(self, [], keepdim)
        if keepdim:
            return lo.reshape([1] * self.dim()), hi.reshape([1] * self.dim())
        return lo, hi
    return G.amin(self, dim, keepdim), G.amax(self, dim, keepdim)


def var_mean(self: Any, dim: Any = None, correction: Any = None, keepdim: bool = False) -> tuple[Any, Any]:
    G = _G()
    return G.var(self, dim, correction=correction, keepdim=keepdim), G.mean(self, [] if dim is None else dim, keepdim)


def std_mean(self: Any, dim: Any = None, correction: Any = None, keepdim: bool = False) -> tuple[Any, Any]:
    G = _G()
    return G.std(self, dim, correction=correction, keepdim=keepdim), G.mean(self, [] if dim is None else dim, keepdim)


def var_mean_unbiased(self: Any, unbiased: bool = True) -> tuple[Any, Any]:
    return var_mean(self, None, 1 if unbiased else 0)


def var_mean_dim(self: Any, dim: Any, unbiased: bool = True, keepdim: bool = False) -> tuple[Any, Any]:
    return var_mean(self, dim, 1 if unbiased else 0, keepdim)


def std_mean_unbiased(self: Any, unbiased: bool = True) -> tuple[Any, Any]:
    return std_mean(self, None, 1 if unbiased else 0)


def std_mean_dim(self: Any, dim: Any, unbiased: bool = True, keepdim: bool = False) -> tuple[Any, Any]:
    return std_mean(self, dim, 1 if unbiased else 0, keepdim)


# -- in-place index ops: the out-of-place op copied back ------------------------------------------------

def _copy_back(self: Any, out: Any) -> Any:
    return self.copy_(out)


def scatter_src_(self: Any, dim: int, index: Any, src: Any) -> Any:
    return _copy_back(self, _G().scatter(self, dim, index, src))


def scatter_value_(self: Any, dim: int, index: Any, value: Any) -> Any:
    return _copy_back(self, _G().scatter(self, dim, index, value))


def scatter_add_(self: Any, dim: int, index: Any, src: Any) -> Any:
    return _copy_back(self, _G().scatter_add(self, dim, index, src))


def index_add_(self: Any, dim: int, index: Any, source: Any, alpha: Any = 1) -> Any:
    return _copy_back(self, _G().index_add(self, dim, index, source, alpha=alpha))


def index_fill(self: Any, dim: int, index: Any, value: Any) -> Any:
    """`value` (a number or a 0-dim tensor) written at `index` along `dim`."""
    G = _G()
    d = S.wrap_dim(dim, max(self.dim(), 1))
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if isinstance(value, G.Tensor):
        check_zero_dim("index_fill", value)
    if index.dtype is not dtypes.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    size = self.shape[d] if self.dim() else 1
    if index.numel():
        low, high = (0, 0) if index.is_meta else (int(index.min()), int(index.max()))  # meta: no values to check
        if low < -size or high >= size:
            raise IndexError(f"index {low if low < -size else high} is out of bounds for dimension {d} with size "
                             f"{size}")
        index = G.where(index < 0, index + size, index)
    if self.dim() == 0:
        fill = G.as_tensor(value, dtype=self.dtype, device=self.device)
        return G.where(G.tensor(index.numel() > 0, device=self.device), fill, self)
    hit = G.zeros(self.shape[d], device=self.device).index_add(0, index, G.ones(index.numel(), device=self.device)) > 0
    shape = [1] * self.dim()
    shape[d] = self.shape[d]
    value_t = value if isinstance(value, G.Tensor) else G.tensor(value, dtype=self.dtype, device=self.device)
    return G.where(hit.reshape(shape), value_t.to(self.dtype), self)


def index_fill_(self: Any, dim: int, index: Any, value: Any) -> Any:
    return _copy_back(self, index_fill(self, dim, index, value))


# -- other overloads of existing names -----------------------------------------------------------------

def max_other(self: Any, other: Any) -> Any:
    """`G.max(a, b)`: the elementwise maximum (PyTorch's max.other)."""
    return _G().maximum(self, other)


def min_other(self: Any, other: Any) -> Any:
    return _G().minimum(self, other)


def where_condition(condition: Any) -> Any:
    """`G.where(cond)`: the indices where `cond` is nonzero, one tensor per dim (nonzero(as_tuple=True))."""
    return _G().nonzero(condition, as_tuple=True)


def round_decimals(self: Any, decimals: int) -> Any:
    """Round half to even at `decimals` places: scale, round, unscale (negative `decimals` round to tens...)."""
    if not self.is_floating_point():
        if decimals < 0:
            raise RuntimeError("round_cpu not implemented for integer types with negative decimals")
        return self.clone()
    scale = 10.0 ** abs(decimals)
    if decimals >= 0:
        return (self * scale).round() / scale
    return (self / scale).round() * scale


# -- nn.functional ops that are ATen ops in PyTorch ----------------------------------------------------

def cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-08) -> Any:
    """sum((x1 / max(|x1|, eps)) * (x2 / max(|x2|, eps))) along `dim`, after broadcasting x1 and x2 (so a dim
    of size 1 broadcast along `dim` counts every copy in the norm). As PyTorch, the clamp to eps changes the
    value only: the gradient flows as through the unclamped norm."""
    G = _G()
    x1, x2 = G.broadcast_tensors(x1, x2)
    n1 = G.linalg_vector_norm(x1, 2, [dim], True)
    n2 = G.linalg_vector_norm(x2, 2, [dim], True)
    n1 = n1 + (n1.clamp_min(eps) - n1).detach()
    n2 = n2 + (n2.clamp_min(eps) - n2).detach()
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1: Any, x2: Any, p: float = 2.0, eps: float = 1e-06, keepdim: bool = False) -> Any:
    """The p-norm of x1 - x2 + eps over the last dim."""
    return _G().linalg_vector_norm(x1 - x2 + eps, p, [-1], keepdim)


def glu(self: Any, dim: int = -1) -> Any:
    n = self.shape[S.wrap_dim(dim, self.dim())] if self.dim() else 0
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {S.wrap_dim(dim, self.dim())} is size {n}")
    a, b = self.chunk(2, dim)
    return a * b.sigmoid()


def threshold(self: Any, threshold: Any, value: Any) -> Any:
    G = _G()
    return G.where(self > threshold, self, G.full_like(self, value))


# -- linear algebra ------------------------------------------------------------------------------------

def trace(self: Any) -> Any:
    if self.dim() != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(self.dim()))
    return _G().diagonal(self).sum()


def mv(self: Any, vec: Any) -> Any:
    if self.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {vec.dim()}, {self.dim()}, {vec.dim()}")
    return self.matmul(vec)


def inverse(self: Any) -> Any:
    return _G().linalg_inv(self)


def linalg_cross(self: Any, other: Any, dim: int = -1) -> Any:
    G = _G()
    if self.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    shape = S.broadcast_shapes(tuple(self.shape), tuple(other.shape))
    d = S.wrap_dim(dim, len(shape))
    if self.shape[d] != 3 or other.shape[d] != 3:  # the cross dim does not broadcast
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {self.shape[d]} and "
                           f"{other.shape[d]}")
    a, b = self.expand(shape), other.expand(shape)
    a0, a1, a2 = (a.select(d, i) for i in range(3))
    b0, b1, b2 = (b.select(d, i) for i in range(3))
    return G.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)


def linalg_matrix_power(self: Any, n: int) -> Any:
    """A^n by repeated squaring; n < 0 inverts first; n == 0 gives the identity (batched)."""
    G = _G()
    if self.dim() < 2 or self.shape[-1] != self.shape[-2]:
        rows, cols = (self.shape[-2] if self.dim() > 1 else 1), (self.shape[-1] if self.dim() else 1)
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{rows} by {cols} matrices")
    if n == 0:  # the identity, written over a copy of A so that it stays in A's graph (zero gradient)
        eye = G.eye(self.shape[-1], dtype=self.dtype, device=self.device)
        return self.clone().copy_(eye.expand(self.shape))
    base = G.linalg_inv(self) if n < 0 else self
    n = abs(n)
    result = None
    while n:
        if n & 1:
            result = base if result is None else result.matmul(base)
        n >>= 1
        if n:
            base = base.matmul(base)
    return result


def dist(self: Any, other: Any, p: Any = 2) -> Any:
    """The p-norm of self - other (broadcast), over all elements."""
    return _G().linalg_vector_norm(self - other, p)
