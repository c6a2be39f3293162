"""CompositeImplicitAutograd tensor ops built from other ops (autograd for free), added for PyTorch
compatibility: clamp with tensor bounds, var/std with `unbiased=`, movedim, diag, cdist, repeat_interleave,
masked_select, equal/allclose/isclose, nonzero(as_tuple=), unique's Python signature."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import dtypes, opcall
from runtime import strides as S
from runtime.kernels.meta_shape import data_dependent


def _G() -> Any:
    return opcall.api


# -- clamp with tensor bounds ---------------------------------------------------------------------------

def clamp_tensor(self: Any, min: Any = None, max: Any = None) -> Any:
    """`where` picks the bound where it applies, so the gradient goes to the bound there and to `self`
    elsewhere (ties included), as PyTorch's clamp.Tensor; NaN in `self` or in a bound propagates."""
    G = _G()
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    out = self
    if min is not None:
        out = G.where(_or_nan_bound(G, out < min, min), min, out)
    if max is not None:
        out = G.where(_or_nan_bound(G, out > max, max), max, out)
    S.broadcast_shapes(self.shape, *(b.shape for b in (min, max) if b is not None))
    if out.dtype is not self.dtype:
        out = out.to(G.result_type(self, *(b for b in (min, max) if b is not None)))
    return out


def _or_nan_bound(G: Any, applies: Any, bound: Any) -> Any:
    """Where a clamp bound applies: `applies` (the comparison), and also where the bound is NaN, as
    PyTorch's clamp propagates a NaN bound."""
    return applies | G.isnan(bound) if bound.dtype.is_floating_point else applies


def clamp_(self: Any, min: Any = None, max: Any = None) -> Any:
    """In place, with number or tensor bounds: the out-of-place clamp copied back (bounds broadcast to self)."""
    out = _G().clamp(self, min, max)
    if not dtypes.can_cast(out.dtype, self.dtype):  # an int tensor and a float bound: the result is float
        raise RuntimeError(f"result type {out.dtype.name} can't be cast to the desired output type "
                           f"{self.dtype.name}")
    if tuple(out.shape) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(out.shape)}")
    return self.copy_(out)


# -- var / std with unbiased= ---------------------------------------------------------------------------

def var_unbiased(self: Any, unbiased: bool = True) -> Any:
    return _G().var(self, None, correction=1 if unbiased else 0)


def var_dim(self: Any, dim: Any, unbiased: bool = True, keepdim: bool = False) -> Any:
    return _G().var(self, dim, correction=1 if unbiased else 0, keepdim=keepdim)


def std_unbiased(self: Any, unbiased: bool = True) -> Any:
    return _G().std(self, None, correction=1 if unbiased else 0)


def std_dim(self: Any, dim: Any, unbiased: bool = True, keepdim: bool = False) -> Any:
    return _G().std(self, dim, correction=1 if unbiased else 0, keepdim=keepdim)


# -- shape ---------------------------------------------------------------------------------------------

def movedim(self: Any, source: Sequence[int] | int, destination: Sequence[int] | int) -> Any:
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    n = self.dim()
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
                           f"same number of dims as destination ({dst} dims)")
    src = [S.wrap_dim(d, n) for d in src]
    dst = [S.wrap_dim(d, n) for d in dst]
    for name, ds in (("source", src), ("destination", dst)):
        if len(set(ds)) != len(ds):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({ds})")
    order = [-1] * n
    for s, d in zip(src, dst, strict=True):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    order = [o if o != -1 else next(rest) for o in order]
    return _G().permute(self, order)


def diag(self: Any, diagonal: int = 0) -> Any:
    G = _G()
    if self.dim() == 2:
        return G.diagonal(self, diagonal).clone()
    if self.dim() != 1:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.dim()}D")
    n = self.shape[0]
    m = n + abs(diagonal)
    rows = np.arange(n) + max(-diagonal, 0)
    cols = np.arange(n) + max(diagonal, 0)
    index = G.tensor(rows * m + cols, device=self.device)
    flat = G.zeros(m * m, dtype=self.dtype, device=self.device)
    return G.index_put(flat, [index], self).reshape(m, m)


def cdist(x1: Any, x2: Any, p: float = 2.0, compute_mode: Any = None) -> Any:
    G = _G()
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: "
                           f"{x2.shape[-1]}")
    if not (x1.is_floating_point() and x2.is_floating_point()):
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {x1.dtype}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    diff = G.unsqueeze(x1, -2) - G.unsqueeze(x2, -3)
    return G.linalg_vector_norm(diff, p, [-1])


def repeat_interleave_int(self: Any, repeats: int, dim: int | None = None, output_size: int | None = None) -> Any:
    G = _G()
    if repeats < 0:
        raise RuntimeError("repeats can not be negative")
    src = G.reshape(self, [-1]) if dim is None else self
    d = 0 if dim is None else S.wrap_dim(dim, self.dim())
    n = src.shape[d] if src.dim() else 1
    if output_size is not None and output_size != n * repeats:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {n * repeats} but got {output_size}")
    index = G.tensor(np.repeat(np.arange(n), repeats), device=self.device)
    return G.index_select(src if src.dim() else G.reshape(src, [1]), d, index)


def repeat_interleave_tensor(self: Any, repeats: Any, dim: int | None = None, output_size: int | None = None) -> Any:
    G = _G()
    src = G.reshape(self, [-1]) if dim is None else self
    d = 0 if dim is None else S.wrap_dim(dim, self.dim())
    if repeats.dim() > 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype.is_floating_point or repeats.dtype is G.bool:
        raise RuntimeError("repeats has to be Long or Int tensor")
    n = src.shape[d] if src.dim() else 1
    if repeats.numel() not in (1, n):
        raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{repeats.numel()} and input.size({d}) = {n}")
    src = src if src.dim() else G.reshape(src, [1])
    if repeats.is_meta:  # the counts are values: the output's length is output_size (Note [Meta tensors])
        if output_size is None:
            data_dependent("repeat_interleave (without output_size)")
        if not self.is_meta:
            raise RuntimeError(f"repeat_interleave: expected repeats on the input's device ({self.device}), got "
                               f"meta")
        return G.index_select(src, d, G.zeros(output_size, dtype=G.int64, device="meta"))
    counts = repeats.numpy(force=True).reshape(-1)
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    if counts.size == 1:
        counts = np.repeat(counts, n)
    if output_size is not None and output_size != int(counts.sum()):
        raise RuntimeError(f"repeat_interleave: output_size is {output_size}, but the repeats sum to "
                           f"{int(counts.sum())}")
    index = G.tensor(np.repeat(np.arange(n), counts), device=self.device)
    return G.index_select(src, d, index)


def repeat_interleave_repeats(repeats: Any, output_size: int | None = None) -> Any:
    """`repeat_interleave(repeats)`: each index i repeated repeats[i] times, in repeats' dtype (int32 or int64)."""
    G = _G()
    if repeats.dim() != 1:
        raise RuntimeError(f"repeat_interleave(repeats): repeats must be a 1-D tensor, got {repeats.dim()}-D")
    if repeats.dtype not in (dtypes.int32, dtypes.int64):
        raise NotImplementedError(f"repeat_interleave(repeats): repeats must be an int32 or int64 tensor, "
                                  f"got {repeats.dtype.name}")
    index = G.arange(repeats.numel(), dtype=repeats.dtype, device=repeats.device)
    return repeat_interleave_tensor(index, repeats, 0, output_size)


def masked_select(self: Any, mask: Any) -> Any:
    G = _G()
    if mask.dtype is not G.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = S.broadcast_shapes(self.shape, mask.shape)
    return G.index(G.expand(self, shape), [G.expand(mask, shape)])


# -- comparison -----------------------------------------------------------------------------------------

def equal(self: Any, other: Any) -> bool:
    if self.device != other.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{self.device} and {other.device}!")
    if tuple(self.shape) != tuple(other.shape):
        return False
    return bool(_G().eq(self, other).all().item())


def isclose(self: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Any:
    G = _G()
    if self.dtype is not other.dtype:
        raise RuntimeError(f"{_type_name(self.dtype)} did not match {_type_name(other.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = G.eq(self, other)
    if equal_nan and self.is_floating_point():
        close = close | (G.isnan(self) & G.isnan(other))
    if self.dtype is G.bool:
        return close
    a = self if self.is_floating_point() else self.to(G.float64)
    b = other if other.is_floating_point() else other.to(G.float64)
    within = G.abs(a - b) <= atol + rtol * G.abs(b)
    return close | (within & G.isfinite(a) & G.isfinite(b))


def allclose(self: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    return bool(isclose(self, other, rtol, atol, equal_nan).all().item())


def _type_name(dtype: Any) -> str:
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
             "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
    return names[dtype.name]


# -- Python signatures over explicit ops --------------------------------------------------------------

def nonzero_tuple(self: Any, as_tuple: bool) -> Any:
    """`nonzero(t, as_tuple=True)`: one 1-D index tensor per dimension (a 0-d input counts as 1-D)."""
    G = _G()
    idx = G.nonzero(self)
    if not as_tuple:
        return idx
    if self.dim() == 0:
        return (G.nonzero(G.reshape(self, [1]))[:, 0],)
    return tuple(G.unbind(idx, 1))


def unique(self: Any, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: int | None = None) -> Any:
    values, inverse, counts = _G()._unique2(self, sorted, return_inverse, return_counts, dim)
    out = (values,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return out[0] if len(out) == 1 else out

