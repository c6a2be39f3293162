"""Functions that PyTorch writes in Python over its ops (torch/functional.py, torch/_lowrank.py) or whose
overloads are easier read as one Python signature: `lu`, `logspace`, `gradient`, `histogramdd`,
`unravel_index`, `svd_lowrank`, `pca_lowrank`. Each is a composition of opgen's ops, so what differentiates
in PyTorch differentiates here through autograd. `install()` (runtime/api.py) sets `Tensor.lu`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import dtypes, opcall, ranges, return_types
from runtime import strides as S
from runtime.device import as_device
from runtime.kernels.numeric_ops import histogram_counts, outer_edges
from runtime.tensor import Tensor, install_methods

__all__ = ["gradient", "histogramdd", "logspace", "lu", "pca_lowrank", "svd_lowrank", "unravel_index"]


def _G() -> Any:
    return opcall.api


def _host(t: Any) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy())


# -- lu ------------------------------------------------------------------------------------------------------

def lu(A: Any, pivot: bool = True, get_infos: bool = False, out: Any = None) -> Any:
    """torch.lu: the packed LU factorisation and its pivots (and the LAPACK infos with get_infos), as
    `linalg.lu_factor_ex`."""
    LU, pivots, infos = _G().linalg.lu_factor_ex(A, pivot=pivot)
    result = (LU, pivots, infos) if get_infos else (LU, pivots)
    return result if out is None else opcall.store_out("lu", result, out)


# -- logspace ------------------------------------------------------------------------------------------------

def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, out: Any = None, dtype: Any = None,
             layout: Any = None, device: Any = None, requires_grad: bool = False) -> Any:
    """base ** x for `steps` x evenly spaced from start to end, as PyTorch computes it: start and end in the
    result dtype first (integers truncate), the exponents in double, each half stepped from its own end."""
    G = _G()
    if out is not None:
        return opcall.store_out("logspace", logspace(start, end, steps, base, dtype=dtype or out.dtype,
                                                     device=device or out.device), out)
    start, end, device = ranges.spaced_bounds("logspace", start, end, device)
    steps = ranges.steps_of("logspace", steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = dtype if dtype is not None else G.get_default_dtype()
    if not isinstance(dt, dtypes.DType):
        raise TypeError(f"logspace(): dtype must be an opgen dtype, got {dt!r}")
    n = int(steps)
    if device is not None and as_device(device).type == "meta":  # no values to compute
        return G.empty(n, dtype=dt, device="meta", requires_grad=requires_grad)
    base = float(base)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if n == 1:  # filled with base ** start (a value the dtype must hold)
            value = float(base ** float(start)) if base or float(start) >= 0 else math.inf
            _check_fits(value, dt)
            values = np.array([value], np.float64)
        else:
            _check_fits(start, dt)
            _check_fits(end, dt)
            if dt.is_floating_point:  # start and end rounded to the dtype, their difference in it too
                as_dtype = dt.np if dt.np is not None else np.float32
                lo, hi = np.asarray(start).astype(as_dtype), np.asarray(end).astype(as_dtype)
                span = float(hi - lo)
            else:  # truncated, wrapped to the type's width, the difference in C's int arithmetic
                lo, hi = _wrap_int(math.trunc(float(start)), dt), _wrap_int(math.trunc(float(end)), dt)
                span = float(hi - lo)
            step = span / (n - 1) if n > 1 else 0.0
            i = np.arange(n, dtype=np.float64)
            exponent = np.where(i < n // 2, float(lo) + step * i, float(hi) - step * (n - 1 - i))
            values = np.power(base, exponent)
        if not dt.is_floating_point:
            values = _c_cast(values, dt)
    result = G.tensor(values, dtype=dt, device=device)
    return result.requires_grad_(True) if requires_grad else result


def _check_fits(value: Any, dt: dtypes.DType) -> None:
    """PyTorch's check of a Scalar converted to `dt`: a value out of the type's range is refused (an
    unsigned type also takes the negatives down to -max, which wrap around)."""
    v = float(value)
    if dt.is_floating_point:
        limit = float(np.finfo(dt.np).max) if dt.np is not None else 3.3895313892515355e38
        bad = math.isfinite(v) and abs(v) > limit
    else:
        info = np.iinfo(dt.np)
        low = -info.max if info.min == 0 else info.min
        bad = not math.isfinite(v) or not low <= math.trunc(v) <= info.max
    if bad:
        raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")


def _wrap_int(v: int, dt: dtypes.DType) -> int:
    bits = 8 * dt.itemsize
    v %= 1 << bits
    return v - (1 << bits) if dt.is_signed and v >= 1 << (bits - 1) else v


def _c_cast(values: np.ndarray, dt: dtypes.DType) -> np.ndarray:
    """C++'s double -> integer conversion as PyTorch's CPU kernel performs it on x86: truncation through a
    64-bit (int64) or 32-bit (narrower types) register, whose out-of-range and NaN value is its minimum,
    then the low bits."""
    bits = 64 if dt.itemsize == 8 else 32
    limit = float(1 << (bits - 1))
    t = np.trunc(values)
    ok = np.isfinite(t) & (t >= -limit) & (t < limit)
    wide = np.where(ok, t, 0).astype(np.int64)
    wide = np.where(ok, wide, -(1 << (bits - 1)))
    return wide.astype(dt.np)


# -- gradient ------------------------------------------------------------------------------------------------

def _slice(x: Any, d: int, start: int, length: int) -> Any:
    return x.narrow(d, start, length)


def _along(c: Any, d: int, ndim: int) -> Any:
    """A 1-D tensor laid along dim `d` of an `ndim`-dim tensor (for broadcasting)."""
    return c.reshape([-1 if i == d else 1 for i in range(ndim)])


def _uniform(f: Any, d: int, h: float, edge_order: int) -> Any:
    n = f.shape[d]
    interior = (_slice(f, d, 2, n - 2) - _slice(f, d, 0, n - 2)) / (2.0 * h)
    if edge_order == 1:
        first = (_slice(f, d, 1, 1) - _slice(f, d, 0, 1)) / h
        last = (_slice(f, d, n - 1, 1) - _slice(f, d, n - 2, 1)) / h
    else:
        first = (-1.5 * _slice(f, d, 0, 1) + 2.0 * _slice(f, d, 1, 1) - 0.5 * _slice(f, d, 2, 1)) / h
        last = (0.5 * _slice(f, d, n - 3, 1) - 2.0 * _slice(f, d, n - 2, 1) + 1.5 * _slice(f, d, n - 1, 1)) / h
    return _G().cat([first, interior, last], d)


def _coordinates(f: Any, d: int, x: Any, edge_order: int) -> Any:
    """Second-order differences over the coordinates `x` of dim d (NumPy's and PyTorch's formulas)."""
    G = _G()
    n, nd = f.shape[d], f.dim()
    x = x.to(f.dtype)
    dx = x.narrow(0, 1, n - 1) - x.narrow(0, 0, n - 1)
    dx1, dx2 = dx.narrow(0, 0, n - 2), dx.narrow(0, 1, n - 2)
    a = _along(-dx2 / (dx1 * (dx1 + dx2)), d, nd)
    b = _along((dx2 - dx1) / (dx1 * dx2), d, nd)
    c = _along(dx1 / (dx2 * (dx1 + dx2)), d, nd)
    interior = a * _slice(f, d, 0, n - 2) + b * _slice(f, d, 1, n - 2) + c * _slice(f, d, 2, n - 2)
    if edge_order == 1:
        first = (_slice(f, d, 1, 1) - _slice(f, d, 0, 1)) / _along(dx.narrow(0, 0, 1), d, nd)
        last = (_slice(f, d, n - 1, 1) - _slice(f, d, n - 2, 1)) / _along(dx.narrow(0, n - 2, 1), d, nd)
    else:
        h1, h2 = dx.narrow(0, 0, 1), dx.narrow(0, 1, 1)
        first = (_along(-(2.0 * h1 + h2) / (h1 * (h1 + h2)), d, nd) * _slice(f, d, 0, 1)
                 + _along((h1 + h2) / (h1 * h2), d, nd) * _slice(f, d, 1, 1)
                 + _along(-h1 / (h2 * (h1 + h2)), d, nd) * _slice(f, d, 2, 1))
        h1, h2 = dx.narrow(0, n - 3, 1), dx.narrow(0, n - 2, 1)
        last = (_along(h2 / (h1 * (h1 + h2)), d, nd) * _slice(f, d, n - 3, 1)
                + _along(-(h2 + h1) / (h1 * h2), d, nd) * _slice(f, d, n - 2, 1)
                + _along((2.0 * h2 + h1) / (h2 * (h1 + h2)), d, nd) * _slice(f, d, n - 1, 1))
    return G.cat([first, interior, last], d)


def gradient(input: Any, *, spacing: Any = 1, dim: Any = None, edge_order: int = 1) -> tuple[Any, ...]:
    """The derivative estimated by central differences in the interior and one-sided differences of order
    `edge_order` (1 or 2) at the ends, along each dim of `dim` (all by default); `spacing` is one step for
    every dim, a step per dim, or a 1-D tensor of coordinates per dim."""
    G = _G()
    if edge_order not in (1, 2):
        raise RuntimeError(f"torch.gradient only supports edge_order=1 and edge_order=2, got {edge_order}")
    nd = input.dim()
    if dim is None:
        dims = list(range(nd))
    elif isinstance(dim, int):
        dims = [S.wrap_dim(dim, nd)]
    else:
        dims = [S.wrap_dim(d, nd) for d in dim]
    if len(set(dims)) != len(dims):
        raise RuntimeError("torch.gradient: dim must not contain duplicates")
    if spacing is None:
        spacing = 1
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or a list of length "
                               f"equal to 'self.dim() = {nd}', since dim argument was not given, but got a list "
                               f"of length {len(spacing)}" if dim is None else
                               f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
                               f"dim arguments to have the same length, but got a spacing argument of length "
                               f"{len(spacing)} and a dim argument of length {len(dims)}.")
        steps = list(spacing)
    else:
        steps = [spacing] * len(dims)
    f = input if input.is_floating_point() else input.to(G.get_default_dtype())
    out = []
    for d, step in zip(dims, steps, strict=True):
        n = input.shape[d]
        if n < edge_order + 1:
            raise RuntimeError(f"torch.gradient expected each dimension size to be at least edge_order+1, got "
                               f"size {n} along dim {d}")
        if isinstance(step, Tensor):
            if step.dim() != 1 or step.shape[0] != n:
                raise RuntimeError(f"torch.gradient expected each tensor to be on the same device and of size "
                                   f"{n} along dim {d}, got shape {list(step.shape)}")
            out.append(_coordinates(f, d, step, edge_order))
        else:
            out.append(_uniform(f, d, float(step), edge_order))
    return tuple(out)


# -- histogramdd ---------------------------------------------------------------------------------------------

def histogramdd(input: Any, bins: Any = 10, *, range: Sequence[float] | None = None, weight: Any = None,
                density: bool = False) -> Any:
    """The D-dimensional histogram of the rows of `input` (..., D): `bins` is a count for every dimension,
    a count per dimension, or a 1-D tensor of edges per dimension; returns the counts (weight sums,
    densities) and the edges of each dimension, all of input's dtype."""
    G = _G()
    if input.dim() < 2:
        raise RuntimeError(f"torch.histogramdd: input tensor should have at least 2 dimensions, but got "
                           f"{input.dim()}")
    if not input.is_floating_point():
        raise RuntimeError(f"torch.histogramdd: input tensor should be floating point, got {input.dtype}")
    D = input.shape[-1]
    values = _host(input).reshape(-1, D).astype(np.float64)
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, got {tuple(weight.shape)} and "
                           f"{tuple(input.shape)}")
    if range is not None and len(range) != 2 * D:
        raise RuntimeError(f"torch.histogramdd: for a {D}-dimensional histogram, range should have {2 * D} "
                           f"elements, but got {len(range)}")
    spec = list(bins) if isinstance(bins, (list, tuple)) else [bins] * D
    if len(spec) != D:
        raise RuntimeError(f"torch.histogramdd: expected {D} sequences of bin edges for each dimension, but got "
                           f"{len(spec)}")
    edges = []
    for i, b in enumerate(spec):
        if isinstance(b, Tensor):
            if b.dim() != 1 or b.shape[0] < 1:
                raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension and at least 1 "
                                   f"entry, but got {b.dim()} dimensions")
            edges.append(b.detach().to(input.dtype).clone())
            continue
        if int(b) <= 0:
            raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {b} for dimension {i}")
        lo, hi = outer_edges(values[:, i], None if range is None else range[2 * i:2 * i + 2])
        edges.append(G.linspace(lo, hi, int(b) + 1, dtype=input.dtype, device=input.device))
    w = None if weight is None else _host(weight).reshape(-1).astype(np.float64)
    hist = histogram_counts(values, [_host(e).astype(np.float64) for e in edges], w, density)
    cls = return_types.make("histogramdd", ("hist", "bin_edges"))
    return cls(G.tensor(hist, dtype=input.dtype, device=input.device), tuple(edges))


# -- unravel_index -------------------------------------------------------------------------------------------

def unravel_index(indices: Any, shape: int | Sequence[int]) -> tuple[Any, ...]:
    """The coordinates (one int64 tensor per dim of `shape`) of flat row-major `indices`; indices are taken
    modulo the shape's size, negative ones counting from the end, as PyTorch does."""
    G = _G()
    if not isinstance(indices, Tensor):
        raise TypeError(f"unravel_index(): 'indices' must be a tensor, got {type(indices).__name__}")
    if indices.is_floating_point() or indices.dtype == G.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    dims = [int(shape)] if isinstance(shape, int) else [int(s) for s in shape]
    if any(s < 0 for s in dims):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(dims)))
    if math.prod(dims) > 2 ** 63 - 1:
        raise RuntimeError("'shape' cannot have a number of elements greater than the maximum value of int64")
    idx = indices.to(G.int64)
    coords = []
    for s in reversed(dims):
        coords.append(G.remainder(idx, s) if s else G.zeros_like(idx))
        idx = G.div(idx, s, rounding_mode="floor") if s else idx
    return tuple(reversed(coords))


# -- randomised low-rank SVD (Halko, Martinsson and Tropp 2011) ----------------------------------------------

def _basis(A: Any, q: int, niter: int, M: Any) -> Any:
    """An orthonormal basis Q (m x q) of the range of A - M, refined by `niter` subspace iterations."""
    G = _G()
    R = G.randn(list(A.shape[:-2]) + [A.shape[-1], q], dtype=A.dtype, device=A.device)
    X = A.matmul(R) if M is None else A.matmul(R) - M.matmul(R)
    Q = G.linalg_qr(X)[0]
    for _ in range(niter):
        X = A.mT.matmul(Q) if M is None else A.mT.matmul(Q) - M.mT.matmul(Q)
        Q = G.linalg_qr(X)[0]
        X = A.matmul(Q) if M is None else A.matmul(Q) - M.matmul(Q)
        Q = G.linalg_qr(X)[0]
    return Q


def svd_lowrank(A: Any, q: int | None = 6, niter: int = 2, M: Any = None) -> Any:
    """U (m x q), S (q), V (n x q) with A - M ~ U diag(S) V^T, from a random sketch of q columns."""
    q = 6 if q is None else q
    m, n = A.shape[-2], A.shape[-1]
    if M is not None:
        M = M.expand(list(A.shape))
    if m < n:  # sketch the tall transpose
        U, S_, V = svd_lowrank(A.mT, q, niter, None if M is None else M.mT)
        return V, S_, U
    Q = _basis(A, q, niter, M)
    B = Q.mT.matmul(A if M is None else A - M)
    U, S_, Vh = _G().linalg_svd(B, False)
    return Q.matmul(U), S_, Vh.mT


def pca_lowrank(A: Any, q: int | None = None, center: bool = True, niter: int = 2) -> Any:
    """The principal directions of A's rows: svd_lowrank of A with its column means taken out (center)."""
    m, n = A.shape[-2], A.shape[-1]
    q = min(6, m, n) if q is None else q
    if not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter)
    return svd_lowrank(A, q, niter, A.mean(-2, keepdim=True))


def install() -> None:
    install_methods(lu=lu)
