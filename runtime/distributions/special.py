"""Special functions the distributions need and opgen has no op for: lgamma, digamma, trigamma, erfinv.

Each is an autograd.Function whose forward evaluates NumPy code on the CPU (a CUDA argument is copied there
and the result back) and whose backward is written with the next function of the family (lgamma' =
digamma, digamma' = trigamma, erfinv' = sqrt(pi)/2 exp(erfinv^2)), so log_prob and entropy of Gamma, Beta,
Dirichlet, Poisson, Binomial and Multinomial are differentiable in their parameters. trigamma's own
derivative is not provided (second derivatives of digamma raise).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from runtime import opcall
from runtime.autograd.custom_function import Function, once_differentiable

Tensor = Any

_lgamma_np = np.vectorize(math.lgamma, otypes=[np.float64])
_erf_np = np.vectorize(math.erf, otypes=[np.float64])


def _digamma_np(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    neg = x <= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        if neg.any():  # reflection: psi(1 - x) - pi / tan(pi x); poles at non-positive integers
            xn = x[neg]
            out[neg] = np.where(xn == np.floor(xn), np.nan, _digamma_pos(1.0 - xn) - np.pi / np.tan(np.pi * xn))
        out[~neg] = _digamma_pos(x[~neg])
    return out


def _digamma_pos(x: np.ndarray) -> np.ndarray:
    """psi(x) for x > 0: recurrence up to x >= 6, then the asymptotic series."""
    x = x.copy()
    acc = np.zeros_like(x)
    for _ in range(6):
        small = x < 6
        if not small.any():
            break
        acc[small] -= 1.0 / x[small]
        x[small] += 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 * (1 / 132)))))
    return acc + np.log(x) - 0.5 * inv - series


def _trigamma_np(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    neg = x <= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        if neg.any():  # reflection: psi1(1 - x) + psi1(x) = pi^2 / sin^2(pi x)
            xn = x[neg]
            out[neg] = np.where(xn == np.floor(xn), np.inf,
                                (np.pi / np.sin(np.pi * xn)) ** 2 - _trigamma_pos(1.0 - xn))
        out[~neg] = _trigamma_pos(x[~neg])
    return out


def _trigamma_pos(x: np.ndarray) -> np.ndarray:
    x = x.copy()
    acc = np.zeros_like(x)
    for _ in range(6):
        small = x < 6
        if not small.any():
            break
        acc[small] += 1.0 / (x[small] * x[small])
        x[small] += 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    series = inv * (1 + inv * (0.5 + inv * (1 / 6 - inv2 * (1 / 30 - inv2 * (1 / 42 - inv2 * (1 / 30))))))
    return acc + series


def _erfinv_np(y: np.ndarray) -> np.ndarray:
    """Giles' single-precision approximation, refined by two Newton steps on erf."""
    y = np.asarray(y, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -np.log((1.0 - y) * (1.0 + y))
        small = w < 5.0
        ws = w - 2.5
        p_small = 2.81022636e-08
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                  -0.00417768164, 0.246640727, 1.50140941):
            p_small = c + p_small * ws
        wl = np.sqrt(np.where(small, 5.0, w)) - 3.0
        p_large = -0.000200214257
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                  0.00943887047, 1.00167406, 2.83297682):
            p_large = c + p_large * wl
        x = np.where(small, p_small, p_large) * y
        for _ in range(2):
            err = _erf_np(x) - y
            x = x - err / (2.0 / np.sqrt(np.pi) * np.exp(-x * x))
        x = np.where(y == 1.0, np.inf, np.where(y == -1.0, -np.inf, x))
        return np.where(np.abs(y) > 1.0, np.nan, x)


def _apply_np(fn: Any, x: Tensor) -> Tensor:
    G = opcall.api
    data = x.detach().cpu().numpy() if x.device.type != "cpu" else x.detach().numpy()
    out = G.from_numpy(np.ascontiguousarray(fn(data)).astype(data.dtype, copy=False))
    return out.to(x.device) if x.device.type != "cpu" else out


def _floating(x: Tensor) -> Tensor:
    return x if x.is_floating_point() else x.to(opcall.api.get_default_dtype())


class _Trigamma(Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        return _apply_np(_trigamma_np, x)

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, g: Tensor) -> Tensor:
        raise RuntimeError("the derivative of trigamma is not implemented by opgen")


class _Digamma(Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        ctx.save_for_backward(x)
        return _apply_np(_digamma_np, x)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return g * _Trigamma.apply(x)


class _Lgamma(Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        ctx.save_for_backward(x)
        return _apply_np(_lgamma_np, x)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return g * _Digamma.apply(x)


class _Erfinv(Function):
    @staticmethod
    def forward(ctx: Any, y: Tensor) -> Tensor:
        x = _apply_np(_erfinv_np, y)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return g * (math.sqrt(math.pi) / 2) * (x * x).exp()


def lgamma(x: Tensor) -> Tensor:
    """log |Gamma(x)|, elementwise."""
    return _Lgamma.apply(_floating(x))


def digamma(x: Tensor) -> Tensor:
    """psi(x) = d/dx log Gamma(x), elementwise."""
    return _Digamma.apply(_floating(x))


def trigamma(x: Tensor) -> Tensor:
    return _Trigamma.apply(_floating(x))


def erfinv(y: Tensor) -> Tensor:
    """The inverse of erf on (-1, 1), elementwise (+-inf at +-1, NaN outside)."""
    return _Erfinv.apply(_floating(y))


def xlogy(x: Tensor | float, y: Tensor) -> Tensor:
    """x * log(y), with 0 where x == 0 (also where y == 0)."""
    G = opcall.api
    x_t = x if isinstance(x, G.Tensor) else G.full_like(y, float(x))
    return G.where(x_t == 0, G.zeros_like(y), x_t * y.log())


__all__ = ["digamma", "erfinv", "lgamma", "trigamma", "xlogy"]
