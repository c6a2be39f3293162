"""Hand-written elementwise ops whose arguments the pointwise kernel spec can't express (str, optional
scalars): div with rounding_mode, clamp, nan_to_num. CompositeExplicitAutograd, NumPy or CuPy."""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime import dtypes, opcall
from runtime.factories import scalar_tensor
from runtime.kernels._xp import result_type, wrap, xp_of
from runtime.kernels.checks import check_divisor
from runtime.kernels.cpu_pointwise import checked_int_scalar
from runtime.kernels.dense_copy import laid_out, preserved_copy
from runtime.tensor import Tensor

_MODES = (None, "trunc", "floor")


def div_mode(self: Tensor, other: Tensor, rounding_mode: str | None = None) -> Tensor:
    """`div(self, other, rounding_mode=...)`: true division, or rounded towards zero / down."""
    if rounding_mode not in _MODES:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    dt = result_type(self, other)
    if rounding_mode is None and not dt.is_floating_point:
        dt = dtypes.get_default_dtype()
    if dt is dtypes.bool_ and rounding_mode is not None:
        raise NotImplementedError(f"\"div_{rounding_mode}\" not implemented for 'Bool'")
    ct = dtypes.float32.np if dt is dtypes.float16 else dt.np
    a, b = self._data.astype(ct, copy=False), other._data.astype(ct, copy=False)
    xp = xp_of(a)
    if rounding_mode is None:
        r = a / b
    elif dt.is_floating_point:
        r = xp.trunc(a / b) if rounding_mode == "trunc" else _floor_div_float(xp, a, b)
    else:
        if xp is np:  # Note [Integer division by zero] in runtime/kernels/checks.py
            check_divisor(b, a, b)
        q = a // b
        if rounding_mode == "trunc":
            q = xp.where((a % b != 0) & ((a < 0) != (b < 0)), q + 1, q)
        r = q
    return wrap(laid_out(r, (self._data, other._data)), a, dt)  # Note [Pointwise output strides]


def _floor_div_float(xp: Any, a: Any, b: Any) -> Any:
    with _quiet(xp):
        return xp.floor_divide(a, b)


def _quiet(xp: Any) -> Any:
    return np.errstate(all="ignore") if xp is np else _Null()


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def div_scalar_mode(self: Tensor, other: Any, rounding_mode: str | None = None) -> Tensor:
    return div_mode(self, scalar_tensor(other), rounding_mode)


def clamp(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """Clamp to [min, max] (min applied first, so min > max gives max); NaN stays NaN."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if self._dtype is dtypes.bool_:
        raise NotImplementedError("\"clamp\" not implemented for 'Bool'")
    dt = result_type(self, *(v for v in (min, max) if v is not None))
    # an int bound is range-checked and wraps as PyTorch's Scalar conversion (`clamp(uint8, min=-1)` is
    # all 255): Note [Integer scalars wrap to the dtype] (runtime/kernels/cpu_pointwise.py)
    if min.__class__ is int:
        min = checked_int_scalar("clamp", "min", dt, min)
    if max.__class__ is int:
        max = checked_int_scalar("clamp", "max", dt, max)
    return _clamp(self, dt, min, max)


def clamp_tensor(self: Tensor, min: Tensor | None = None, max: Tensor | None = None) -> Tensor:
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if self._dtype is dtypes.bool_:
        raise NotImplementedError("\"clamp\" not implemented for 'Bool'")
    dt = result_type(self, *(v for v in (min, max) if v is not None))
    return _clamp(self, dt, None if min is None else min._data, None if max is None else max._data)


def _clamp(self: Tensor, dt: dtypes.DType, lo: Any, hi: Any) -> Tensor:
    ct = dtypes.float32.np if dt is dtypes.float16 else dt.np
    a = self._data.astype(ct, copy=False)
    xp = xp_of(a)
    r = a
    # bounds as arrays: a Python bound outside an integer dtype's range (uint8 vs -1) still compares
    if lo is not None:
        r = xp.maximum(r, xp.asarray(lo))
    if hi is not None:
        r = xp.minimum(r, xp.asarray(hi))
    if r is a:
        r = a.copy()
    return wrap(laid_out(r, (self._data, lo, hi)), a, dt)  # Note [Pointwise output strides]


def clip(self: Any, min: Any = None, max: Any = None) -> Any:
    """`clip` is an alias of `clamp` (CompositeImplicitAutograd)."""
    G = opcall.api
    return G.clamp(self, min, max)


def nan_to_num(self: Tensor, nan: float | None = None, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """NaN -> `nan` (0), +inf -> `posinf` (the dtype's max), -inf -> `neginf` (the dtype's lowest)."""
    a = self._data
    if not self._dtype.is_floating_point:
        return Tensor._wrap(preserved_copy(a), self._dtype)  # laid out as an elementwise result
    xp = xp_of(a)
    import numpy as np
    info = np.finfo(self._dtype.np)
    r = xp.nan_to_num(a, nan=0.0 if nan is None else nan,
                      posinf=float(info.max) if posinf is None else posinf,
                      neginf=float(info.min) if neginf is None else neginf)
    return wrap(laid_out(r, (a,)), a, self._dtype)  # Note [Pointwise output strides]


def positive(self: Any) -> Any:
    """`+x`: the tensor itself (an error for bool, as in PyTorch)."""
    if self.dtype is dtypes.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self
