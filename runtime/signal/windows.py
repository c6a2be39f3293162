"""Window functions: `G.signal.windows.<name>` (torch.signal.windows) and the factories `G.hann_window`,
`G.hamming_window`, `G.bartlett_window`, `G.blackman_window`, `G.kaiser_window` (torch's aten windows).

A window has no tensor input, so it is computed in float64 with NumPy from its closed form and rounded
once to the requested dtype (PyTorch computes in the requested dtype; the two agree to that dtype's
rounding). `sym=False` (and the aten windows' `periodic=True`) is the symmetric window of length M + 1
without its last point, the form that is periodic in M samples.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from runtime import dtypes, factories
from runtime.tensor import Tensor

__all__ = [
    "bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming", "hamming",
    "hann", "kaiser", "nuttall",
]

_NUTTALL = (0.3635819, 0.4891775, 0.1365995, 0.0106411)
_BLACKMAN = (0.42, 0.5, 0.08)


def _check(name: str, M: Any, dtype: Any, layout: Any) -> dtypes.DType:
    """The window's dtype (the default dtype when None) after PyTorch's checks of its arguments."""
    if isinstance(M, bool) or not isinstance(M, int | np.integer):
        raise TypeError(f"{name}(): M must be an int, not {type(M).__name__}")
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and str(layout) not in ("strided", "torch.strided", "opgen.strided"):
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    dt = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
    if dt.name not in ("float32", "float64"):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dt}")
    return dt


def _make(values: np.ndarray, dtype: dtypes.DType, device: Any, requires_grad: bool) -> Tensor:
    return factories.tensor(np.ascontiguousarray(values, dtype=np.float64), dtype=dtype, device=device,
                            requires_grad=requires_grad)


def _span(M: int, sym: bool) -> int:
    """The denominator of a window's phase: M - 1 when symmetric, M when periodic."""
    return M - 1 if sym else M


def _cosine_sum(M: int, coefficients: Sequence[float], sym: bool) -> np.ndarray:
    """sum_i (-1)^i a_i cos(2 pi i n / span), n = 0 .. M-1."""
    if M == 1:
        return np.ones(1)
    n = np.arange(M, dtype=np.float64)
    phase = 2.0 * math.pi * n / _span(M, sym)
    out = np.zeros(M)
    for i, a in enumerate(coefficients):
        out += (-1.0) ** i * float(a) * np.cos(i * phase)
    return out


# ---- torch.signal.windows -------------------------------------------------------------------------------

def general_cosine(M: int, *, a: Iterable[float], sym: bool = True, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False) -> Tensor:
    """The sum of cosines with coefficients `a`: w[n] = sum_i (-1)^i a[i] cos(2 pi i n / (M - 1))."""
    dt = _check("general_cosine", M, dtype, layout)
    if M == 0:
        return _make(np.empty(0), dt, device, requires_grad)
    if isinstance(a, Tensor | str) or not isinstance(a, Iterable):
        raise TypeError("general_cosine(): the coefficients `a` must be a list or tuple of numbers")
    coefficients = [float(x) for x in a]
    if not coefficients:
        raise ValueError("general_cosine(): the coefficients `a` cannot be empty")
    return _make(_cosine_sum(M, coefficients, sym), dt, device, requires_grad)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype: Any = None, layout: Any = None,
                    device: Any = None, requires_grad: bool = False) -> Tensor:
    """alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    dt = _check("general_hamming", M, dtype, layout)
    if M == 0:
        return _make(np.empty(0), dt, device, requires_grad)
    return _make(_cosine_sum(M, (alpha, 1.0 - alpha), sym), dt, device, requires_grad)


def hamming(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,
            requires_grad: bool = False) -> Tensor:
    """The Hamming window: general_hamming with alpha 0.54."""
    return general_hamming(M, alpha=0.54, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """The Hann window: general_hamming with alpha 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """The Blackman window: general_cosine with a = (0.42, 0.5, 0.08)."""
    _check("blackman", M, dtype, layout)
    return general_cosine(M, a=_BLACKMAN, sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,
            requires_grad: bool = False) -> Tensor:
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    _check("nuttall", M, dtype, layout)
    return general_cosine(M, a=_NUTTALL, sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """The triangular window 1 - |2n / (M - 1) - 1|."""
    dt = _check("bartlett", M, dtype, layout)
    if M <= 1:
        return _make(np.ones(M), dt, device, requires_grad)
    n = np.arange(M, dtype=np.float64)
    return _make(1.0 - np.abs(2.0 * n / _span(M, sym) - 1.0), dt, device, requires_grad)


def cosine(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """The sine window sin(pi (n + 1/2) / M)."""
    dt = _check("cosine", M, dtype, layout)
    if M == 0:
        return _make(np.empty(0), dt, device, requires_grad)
    denominator = M + 1 if not sym and M > 1 else M
    n = np.arange(M, dtype=np.float64)
    return _make(np.sin(math.pi * (n + 0.5) / denominator), dt, device, requires_grad)


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True, dtype: Any = None,
                layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """exp(-|n - center| / tau), centred in the window unless `center` (periodic windows only) is given."""
    dt = _check("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"exponential(): tau must be positive, got {tau}")
    if sym and center is not None:
        raise ValueError("exponential(): center must be None for symmetric windows")
    if M == 0:
        return _make(np.empty(0), dt, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    n = np.arange(M, dtype=np.float64)
    return _make(np.exp(-np.abs(n - center) / tau), dt, device, requires_grad)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """exp(-(n - (M - 1) / 2)^2 / (2 std^2))."""
    dt = _check("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"gaussian(): the standard deviation must be positive, got {std}")
    if M == 0:
        return _make(np.empty(0), dt, device, requires_grad)
    middle = (M if not sym and M > 1 else M - 1) / 2.0
    n = np.arange(M, dtype=np.float64)
    return _make(np.exp(-((n - middle) ** 2) / (2.0 * std * std)), dt, device, requires_grad)


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype: Any = None, layout: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)."""
    dt = _check("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"kaiser(): beta must be non-negative, got {beta}")
    if M <= 1:
        return _make(np.ones(M), dt, device, requires_grad)
    return _make(_kaiser(M, float(beta), sym), dt, device, requires_grad)


def _kaiser(M: int, beta: float, sym: bool) -> np.ndarray:
    n = np.arange(M, dtype=np.float64)
    ratio = np.minimum(2.0 * n / _span(M, sym) - 1.0, 1.0)
    return np.i0(beta * np.sqrt(np.maximum(1.0 - ratio * ratio, 0.0))) / np.i0(beta)


# ---- torch.<name>_window (aten) -------------------------------------------------------------------------

def _check_aten(name: str, window_length: Any, dtype: Any) -> dtypes.DType:
    if isinstance(window_length, bool) or not isinstance(window_length, int | np.integer):
        raise TypeError(f"{name}(): window_length must be an int, not {type(window_length).__name__}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    dt = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects a floating point dtype, got {dt}")
    return dt


def _aten(name: str, window_length: int, periodic: bool, dtype: Any, device: Any, requires_grad: bool,
          values: Any) -> Tensor:
    dt = _check_aten(name, window_length, dtype)
    if window_length <= 1:
        return _make(np.ones(window_length), dt, device, requires_grad)
    return _make(values(window_length, not periodic), dt, device, requires_grad)


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None,
                device: Any = None, pin_memory: bool | None = False, requires_grad: bool = False) -> Tensor:
    """The Hann window of `window_length` points (periodic unless `periodic=False`)."""
    return _aten("hann_window", window_length, periodic, dtype, device, requires_grad,
                 lambda m, sym: _cosine_sum(m, (0.5, 0.5), sym))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: bool | None = False,
                   requires_grad: bool = False) -> Tensor:
    """alpha - beta cos(2 pi n / N) of `window_length` points (periodic unless `periodic=False`)."""
    return _aten("hamming_window", window_length, periodic, dtype, device, requires_grad,
                 lambda m, sym: _cosine_sum(m, (alpha, beta), sym))


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None,
                    device: Any = None, pin_memory: bool | None = False, requires_grad: bool = False) -> Tensor:
    """The Blackman window of `window_length` points (periodic unless `periodic=False`)."""
    return _aten("blackman_window", window_length, periodic, dtype, device, requires_grad,
                 lambda m, sym: _cosine_sum(m, _BLACKMAN, sym))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None,
                    device: Any = None, pin_memory: bool | None = False, requires_grad: bool = False) -> Tensor:
    """The triangular window of `window_length` points (periodic unless `periodic=False`)."""
    return _aten("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                 lambda m, sym: 1.0 - np.abs(2.0 * np.arange(m) / _span(m, sym) - 1.0))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: Any = None,
                  layout: Any = None, device: Any = None, pin_memory: bool | None = False,
                  requires_grad: bool = False) -> Tensor:
    """The Kaiser window of `window_length` points with shape parameter `beta`."""
    return _aten("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                 lambda m, sym: _kaiser(m, float(beta), sym))
