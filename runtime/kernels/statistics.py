"""Counting and order statistics: searchsorted, bincount, histc, isin (NumPy kernels, no gradient),
quantile and nanquantile (built from sort and gather, so they differentiate)."""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime import dtypes, opcall
from runtime.kernels._xp import wrap, xp_of
from runtime.tensor import Tensor


def _G() -> Any:
    return opcall.api


def _host(a: Any) -> np.ndarray:
    return np.asarray(a) if isinstance(a, np.ndarray) else a.get()


def _back(r: np.ndarray, like: Any, dt: dtypes.DType) -> Tensor:
    if xp_of(like) is not np:
        r = xp_of(like).asarray(r)
    return wrap(r, like, dt)


def _searchsorted(seq: Tensor, values: Any, out_int32: bool, right: bool, side: str | None,
                  sorter: Tensor | None) -> Tensor:
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("side and right can't be set to opposites, got side of left while right was True")
        right = side == "right"
    s = _host(seq._data)
    v = _host(values._data) if isinstance(values, Tensor) else np.asarray(values)
    if s.ndim > 1 and v.ndim == 0:
        raise RuntimeError("torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                           f"dimension is 1, but we got boundaries tensor dim({s.ndim})")
    if sorter is not None:
        s = np.take_along_axis(s, _host(sorter._data).astype(np.int64), axis=-1)
    mode = "right" if right else "left"
    if s.ndim <= 1:
        r = np.searchsorted(s.reshape(-1), v, side=mode)
    else:
        if s.shape[:-1] != v.shape[:-1]:
            raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                               "dimensions of boundaries tensor and input value tensor must match")
        flat_s = s.reshape(-1, s.shape[-1])
        flat_v = v.reshape(-1, v.shape[-1])
        r = np.stack([np.searchsorted(a, b, side=mode) for a, b in zip(flat_s, flat_v, strict=True)]) \
            if flat_s.shape[0] else np.zeros(flat_v.shape, np.int64)
        r = r.reshape(v.shape)
    dt = dtypes.int32 if out_int32 else dtypes.int64
    return _back(np.asarray(r, dtype=dt.np), seq._data, dt)


def searchsorted_Tensor(sorted_sequence: Tensor, self: Tensor, out_int32: bool = False, right: bool = False,
                        side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    return _searchsorted(sorted_sequence, self, out_int32, right, side, sorter)


def searchsorted_Scalar(sorted_sequence: Tensor, self: Any, out_int32: bool = False, right: bool = False,
                        side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    if sorted_sequence.dim() != 1:
        raise RuntimeError("input value can be a scalar only when boundaries tensor dimension is 1")
    return _searchsorted(sorted_sequence, np.asarray(self), out_int32, right, side, sorter)


def bincount(self: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    if self.dim() != 1 or self._dtype.is_floating_point or self._dtype is dtypes.bool_:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    x = _host(self._data).astype(np.int64)
    if x.size and int(x.min()) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return _back(np.bincount(x, minlength=minlength).astype(np.int64), self._data, dtypes.int64)
    if tuple(weights.shape) != tuple(self.shape):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    dt = weights._dtype if weights._dtype.is_floating_point else dtypes.float64
    r = np.bincount(x, weights=_host(weights._data).astype(np.float64), minlength=minlength)
    return _back(r.astype(dt.np), self._data, dt)


def histc(self: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:
    if bins <= 0:
        raise RuntimeError("torch.histc(): bins must be > 0")
    if not self._dtype.is_floating_point and self.device.type != "cuda":
        # PyTorch's CPU histc takes floating tensors only (its CUDA one takes integers too)
        raise NotImplementedError(f"histc(): a CPU tensor of dtype {self._dtype.name} is not supported; "
                                  "histc takes floating-point tensors (convert with .float())")
    x = _host(self._data).astype(np.float64).reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc(): max must be larger than min")
    inside = x[(x >= lo) & (x <= hi)]
    r, _ = np.histogram(inside, bins=bins, range=(lo, hi))
    dt = self._dtype
    return _back(r.astype(dt.np), self._data, dt)


def _isin(elements: Any, test: Any, invert: bool, like: Any) -> Tensor:
    if np.asarray(elements).dtype.kind == "b" or np.asarray(test).dtype.kind == "b":
        raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    r = np.isin(elements, test, invert=invert)
    return _back(np.asarray(r), like, dtypes.bool_)


def isin_Tensor_Tensor(elements: Tensor, test_elements: Tensor, assume_unique: bool = False,
                       invert: bool = False) -> Tensor:
    return _isin(_host(elements._data), _host(test_elements._data), invert, elements._data)


def isin_Tensor_Scalar(elements: Tensor, test_element: Any, assume_unique: bool = False,
                       invert: bool = False) -> Tensor:
    return _isin(_host(elements._data), np.asarray([test_element]), invert, elements._data)


def isin_Scalar_Tensor(element: Any, test_elements: Tensor, assume_unique: bool = False,
                       invert: bool = False) -> Tensor:
    return _isin(np.asarray(element), _host(test_elements._data), invert, test_elements._data)


# ---- quantiles (composite) ---------------------------------------------------------------------------

def _quantile(self: Any, q: Any, dim: int | None, keepdim: bool, interpolation: str, ignore_nan: bool,
              name: str) -> Any:
    G = _G()
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                           f"Got {interpolation}")
    if self.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    scalar_q = not isinstance(q, Tensor)
    qt = G.tensor(q, dtype=self.dtype, device=self.device) if scalar_q else q
    if qt.dim() > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if not scalar_q and qt.dtype is not self.dtype:
        raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
    qv = _host(qt._data)
    if qv.size and (bool((qv < 0).any()) or bool((qv > 1).any())):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if self.numel() == 0 and dim is None:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    q1 = qt.reshape(-1)
    if dim is None:
        x = self.reshape(-1)
        d = 0
    else:
        d = dim % self.dim() if self.dim() else 0
        x = self if self.dim() else self.reshape(1)
    x = x.movedim(d, -1) if x.dim() else x
    s = x.sort(-1)[0]
    n = s.shape[-1]
    nan = s.isnan()
    if ignore_nan:
        valid = (~nan).sum(-1, keepdim=True).to(self.dtype)
    else:
        valid = G.full(tuple(s.shape[:-1]) + (1,), float(n), dtype=self.dtype, device=self.device)
    pos = q1 * (valid - 1).clamp(min=0)                                   # (..., Q)
    lo = pos.floor().clamp(0, max(n - 1, 0))
    hi = pos.ceil().clamp(0, max(n - 1, 0))
    if n == 0:
        r = G.full(tuple(pos.shape), float("nan"), dtype=self.dtype, device=self.device)
    else:
        v_lo = s.gather(-1, lo.to(dtypes.int64))
        v_hi = s.gather(-1, hi.to(dtypes.int64))
        if interpolation == "linear":
            r = v_lo + (v_hi - v_lo) * (pos - lo)
        elif interpolation == "lower":
            r = v_lo
        elif interpolation == "higher":
            r = v_hi
        elif interpolation == "midpoint":
            r = (v_lo + v_hi) / 2
        else:
            r = s.gather(-1, pos.round().clamp(0, n - 1).to(dtypes.int64))
        bad = (valid == 0) if ignore_nan else nan.any(-1, keepdim=True)
        r = G.where(bad, G.full_like(r, float("nan")), r)
    r = r.movedim(-1, 0)                                                   # (Q, ...)
    if keepdim:
        if dim is None:
            r = r.reshape([r.shape[0]] + [1] * self.dim())
        elif self.dim():
            r = r.unsqueeze(d + 1)
    return r[0] if scalar_q or qt.dim() == 0 else r


def quantile(self: Any, q: Any, dim: int | None = None, keepdim: bool = False, interpolation: str = "linear") -> Any:
    return _quantile(self, q, dim, keepdim, interpolation, False, "quantile")


def nanquantile(self: Any, q: Any, dim: int | None = None, keepdim: bool = False,
                interpolation: str = "linear") -> Any:
    return _quantile(self, q, dim, keepdim, interpolation, True, "nanquantile")
