"""Elementwise and simplex transforms: exp, power, sigmoid, tanh, abs, affine, softplus, softmax, stick breaking."""

from __future__ import annotations

import math
import numbers
from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.transform_base import Transform

Tensor = Any


def _G() -> Any:
    return opcall.api


class ExpTransform(Transform):
    """y = exp(x)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExpTransform)

    def __hash__(self) -> int:
        return hash(ExpTransform)

    def _call(self, x: Tensor) -> Tensor:
        return x.exp()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x


class PowerTransform(Transform):
    """y = x ** exponent on positive x."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.exponent = exponent

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PowerTransform) and bool((_as_tensor(self.exponent) ==
                                                            _as_tensor(other.exponent)).all())

    def __hash__(self) -> int:
        return id(self)

    @property
    def sign(self) -> Any:  # type: ignore[override]
        return _as_tensor(self.exponent).sign()

    def _call(self, x: Tensor) -> Tensor:
        return x.pow(self.exponent)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return (self.exponent * y / x).abs().log()


def _as_tensor(v: Any) -> Tensor:
    G = _G()
    return v if isinstance(v, G.Tensor) else G.tensor(float(v))


class SigmoidTransform(Transform):
    """y = 1 / (1 + exp(-x))."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SigmoidTransform)

    def __hash__(self) -> int:
        return hash(SigmoidTransform)

    def _call(self, x: Tensor) -> Tensor:
        G = _G()
        finfo = G.finfo(x.dtype)
        return x.sigmoid().clamp(min=finfo.tiny, max=1.0 - finfo.eps)

    def _inverse(self, y: Tensor) -> Tensor:
        G = _G()
        finfo = G.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        F = _G().nn.functional
        return -F.softplus(-x) - F.softplus(x)


class TanhTransform(Transform):
    """y = tanh(x)."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TanhTransform)

    def __hash__(self) -> int:
        return hash(TanhTransform)

    def _call(self, x: Tensor) -> Tensor:
        return x.tanh()

    def _inverse(self, y: Tensor) -> Tensor:
        return 0.5 * ((1 + y).log() - (1 - y).log())

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        # log(1 - tanh(x)^2) = 2 (log 2 - x - softplus(-2x)), stable for large |x|
        F = _G().nn.functional
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AbsTransform(Transform):
    """y = |x| (not bijective)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbsTransform)

    def __hash__(self) -> int:
        return hash(AbsTransform)

    def _call(self, x: Tensor) -> Tensor:
        return x.abs()

    def _inverse(self, y: Tensor) -> Tensor:
        return y


class AffineTransform(Transform):
    """y = loc + scale * x, over events of `event_dim` dimensions."""

    bijective = True

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real,
                                                                                      self._event_dim)

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return self.domain

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self if self._cache_size == cache_size else AffineTransform(self.loc, self.scale, self._event_dim,
                                                                           cache_size)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        return _equal(self.loc, other.loc) and _equal(self.scale, other.scale)

    def __hash__(self) -> int:
        return id(self)

    @property
    def sign(self) -> Any:  # type: ignore[override]
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        G = _G()
        shape = x.shape
        scale = self.scale
        if isinstance(scale, numbers.Real):
            result = G.full_like(x, math.log(abs(scale)))
        else:
            result = scale.abs().log()
        if self._event_dim:
            result_size = tuple(result.shape[:result.dim() - self._event_dim]) + (-1,)
            result = result.reshape(*result_size).sum(-1)
            shape = shape[:len(shape) - self._event_dim]
        return result.expand(*shape)

    def __repr__(self) -> str:
        return f"AffineTransform(loc={self.loc}, scale={self.scale})"


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return a == b
    return bool((_as_tensor(a) == _as_tensor(b)).all())


class SoftmaxTransform(Transform):
    """x -> softmax(x) over the last dimension (not bijective; its inverse is log)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftmaxTransform)

    def __hash__(self) -> int:
        return hash(SoftmaxTransform)

    def _call(self, x: Tensor) -> Tensor:
        logprobs = x - x.max(-1, keepdim=True)[0]
        probs = logprobs.exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()


class StickBreakingTransform(Transform):
    """R^(K-1) -> the K-simplex by stick breaking (bijective)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StickBreakingTransform)

    def __hash__(self) -> int:
        return hash(StickBreakingTransform)

    def _offset(self, x: Tensor) -> Tensor:
        G = _G()
        k = x.shape[-1]
        return (k - G.arange(k, dtype=x.dtype, device=x.device)).log()

    def _call(self, x: Tensor) -> Tensor:
        G = _G()
        z = (x - self._offset(x)).sigmoid()
        z_cumprod = (1 - z).cumprod(-1)
        ones = G.ones(*x.shape[:-1], 1, dtype=x.dtype, device=x.device)
        return G.cat([z, ones], -1) * G.cat([ones, z_cumprod], -1)

    def _inverse(self, y: Tensor) -> Tensor:
        G = _G()
        y_crop = y[..., :-1]
        k = y_crop.shape[-1]
        offset = (k - G.arange(k, dtype=y.dtype, device=y.device)).log()
        sf = 1 - y_crop.cumsum(-1)
        finfo = G.finfo(y.dtype)
        sf = sf.clamp(min=finfo.tiny)
        return y_crop.log() - sf.log() + offset

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        F = _G().nn.functional
        shifted = x - self._offset(x)
        return (-shifted - F.softplus(-shifted) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape: Any) -> Any:
        return (*shape[:-1], shape[-1] + 1)

    def inverse_shape(self, shape: Any) -> Any:
        return (*shape[:-1], shape[-1] - 1)


class SoftplusTransform(Transform):
    """y = log(1 + exp(x))."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftplusTransform)

    def __hash__(self) -> int:
        return hash(SoftplusTransform)

    def _call(self, x: Tensor) -> Tensor:
        return _G().nn.functional.softplus(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -_G().nn.functional.softplus(-x)


__all__ = ["AbsTransform", "AffineTransform", "ExpTransform", "PowerTransform", "SigmoidTransform",
           "SoftmaxTransform", "SoftplusTransform", "StickBreakingTransform", "TanhTransform"]
