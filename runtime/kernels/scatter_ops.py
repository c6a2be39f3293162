"""Scatter with a reduction (`scatter_reduce`, `scatter(..., reduce=)`, `index_reduce`, `index_copy`).

`scatter_reduce` is the one kernel (CompositeExplicitAutograd, NumPy's unbuffered `ufunc.at` on the host
array, so repeated indices accumulate); its gradient is `scatter_reduce_backward`, built from ops. The
others are compositions of it and of `scatter`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime import dtypes, opcall
from runtime import strides as S
from runtime.kernels._xp import wrap, xp_of
from runtime.kernels.index_ops import _check_scatter
from runtime.tensor import Tensor

REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _G() -> Any:
    return opcall.api


def _host(a: Any) -> np.ndarray:
    return np.asarray(a) if isinstance(a, np.ndarray) else a.get()


def scatter_reduce_two(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
                       include_self: bool = True) -> Tensor:
    if reduce not in REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if src._dtype is not self._dtype:
        raise RuntimeError(f"scatter_reduce(): Expected self.dtype to be equal to src.dtype, but got "
                           f"{self._dtype.name} and {src._dtype.name}")
    like = self._data
    out = _host(like).copy()
    flat = out.ndim == 0
    if flat:
        out = out.reshape(1)
    d = S.wrap_dim(dim, out.ndim)
    _check_scatter(self, index, d, "scatter_reduce", src)
    idx = _host(index._data).astype(np.int64).reshape(-1) if flat else _host(index._data).astype(np.int64)
    values = _host(src._data)
    values = values.reshape(-1)[: idx.size] if flat else values[tuple(slice(0, n) for n in idx.shape)]
    if idx.size:
        idx = np.where(idx < 0, idx + out.shape[d], idx)
        key = tuple(idx if k == d else np.arange(n).reshape([-1 if j == k else 1 for j in range(idx.ndim)])
                    for k, n in enumerate(idx.shape))
        touched = np.zeros(out.shape, dtype=bool)
        touched[key] = True
        integral = out.dtype.kind in "biu"
        if reduce in ("sum", "mean"):
            acc = out if include_self else np.where(touched, 0, out).astype(out.dtype)
            work = acc.astype(np.float64) if reduce == "mean" and integral else acc.copy()
            np.add.at(work, key, values)
            if reduce == "mean":
                count = np.full(out.shape, 1 if include_self else 0, dtype=np.int64)
                np.add.at(count, key, 1)
                count = np.maximum(count, 1)
                work = np.floor_divide(work, count) if integral else work / count
            out = np.where(touched, work, out).astype(out.dtype)
        else:
            ufunc = {"prod": np.multiply, "amax": np.fmax, "amin": np.fmin}[reduce]
            if not include_self:
                start = {"prod": 1, "amax": -np.inf, "amin": np.inf}[reduce]
                if integral and reduce != "prod":
                    info = np.iinfo(out.dtype) if out.dtype.kind != "b" else None
                    start = (info.min if reduce == "amax" else info.max) if info else (reduce == "amin")
                work = np.where(touched, start, out).astype(out.dtype)
            else:
                work = out.copy()
            if reduce == "amax":
                ufunc = np.maximum  # NaN propagates, as PyTorch
            elif reduce == "amin":
                ufunc = np.minimum
            ufunc.at(work, key, values)
            out = work
    result = out.reshape(()) if flat else out
    if xp_of(like) is not np:
        result = xp_of(like).asarray(result)
    return wrap(result, like, self._dtype)


def scatter_reduce_backward(grad: Any, self: Any, dim: int, index: Any, src: Any, reduce: str, include_self: bool,
                            result: Any) -> tuple[Any, Any]:
    """The gradients of scatter_reduce for self and src (PyTorch's rules: `mean` divides by the count,
    `amax`/`amin` share the gradient evenly among the values equal to the result, `prod` divides the
    result's gradient by each factor)."""
    G = _G()
    index = index.to(dtypes.int64)
    ones = G.ones_like(src)
    touched = G.zeros_like(self).scatter(dim, index, ones).to(dtypes.bool_)
    if reduce == "sum":
        g_self = grad if include_self else grad.masked_fill(touched, 0)
        return g_self, grad.gather(dim, index)
    if reduce == "mean":
        count = G.zeros_like(self).scatter_add(dim, index, ones)
        count = count + 1 if include_self else count
        count = count.masked_fill(count == 0, 1)
        g = grad / count
        g_self = g if include_self else g.masked_fill(touched, 0)
        return g_self, g.gather(dim, index)
    if reduce == "prod":
        gr = grad * result
        g_self = gr / self if include_self else grad.masked_fill(touched, 0)
        if include_self:
            g_self = G.where(touched, g_self, grad)
        return g_self, gr.gather(dim, index) / src
    # amax / amin
    value = result.gather(dim, index)
    self_is = (self == result).to(grad.dtype)
    if not include_self:
        self_is = self_is.masked_fill(touched, 0)
    src_is = (src == value).to(grad.dtype)
    n = self_is.scatter_add(dim, index, src_is)
    g = grad / n.masked_fill(n == 0, 1)
    g_self = G.where(touched, self_is * g, grad)
    return g_self, src_is * g.gather(dim, index)


def scatter_reduce_op(self: Any, dim: int, index: Any, src: Any, reduce: str) -> Any:
    """scatter(self, dim, index, src, reduce='add'|'multiply') (the older form of scatter_reduce)."""
    modes = {"add": "sum", "multiply": "prod"}
    if reduce not in modes:
        raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
    if getattr(src, "_wrapped", False):  # `scatter(x, d, i, 2.0, reduce=...)`: the number the binding wrapped
        src = _G().full(tuple(index.shape), src.item(), dtype=self.dtype, device=self.device)
    return _G().scatter_reduce(self, dim, index, src.to(self.dtype), modes[reduce])


def scatter_value_reduce(self: Any, dim: int, index: Any, value: Any, reduce: str) -> Any:
    src = _G().full(tuple(index.shape), value, dtype=self.dtype, device=self.device)
    return scatter_reduce_op(self, dim, index, src, reduce)


def scatter_reduce_inplace(self: Any, dim: int, index: Any, src: Any, reduce: str) -> Any:
    return self.copy_(scatter_reduce_op(self, dim, index, src, reduce))


def scatter_value_reduce_inplace(self: Any, dim: int, index: Any, value: Any, reduce: str) -> Any:
    return self.copy_(scatter_value_reduce(self, dim, index, value, reduce))


def scatter_reduce_two_inplace(self: Any, dim: int, index: Any, src: Any, reduce: str,
                               include_self: bool = True) -> Any:
    return self.copy_(_G().scatter_reduce(self, dim, index, src, reduce, include_self=include_self))


def _expand_index(self: Any, dim: int, index: Any, source: Any) -> tuple[int, Any]:
    """index (a vector along dim) as a scatter index of source's shape."""
    if index.dim() > 1:
        raise IndexError("index_copy_(): Index should have dimension 1 or 0 (got {index.dim()})")
    if self.dim() == 0:
        return 0, index.reshape(-1)[: max(source.numel(), 1)].reshape(source.shape)
    d = S.wrap_dim(dim, self.dim())
    shape = [1] * source.dim()
    src_d = d if source.dim() else 0
    if source.dim():
        shape[src_d] = -1
    return d, index.reshape(shape).expand(source.shape) if source.dim() else index.reshape(())


def index_copy(self: Any, dim: int, index: Any, source: Any) -> Any:
    d, idx = _expand_index(self, dim, index, source)
    if source.dim() == 0 and self.dim() != 0:
        source, idx = source.reshape([1] * self.dim()), idx.reshape([1] * self.dim())
    return self.scatter(d, idx, source)


def index_reduce(self: Any, dim: int, index: Any, source: Any, reduce: str, include_self: bool = True) -> Any:
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d, idx = _expand_index(self, dim, index, source)
    if source.dim() == 0 and self.dim() != 0:
        source, idx = source.reshape([1] * self.dim()), idx.reshape([1] * self.dim())
    return _G().scatter_reduce(self, d, idx, source, reduce, include_self=include_self)
