"""Transforms over structured values: independent events, reshapes, concatenation and stacking, Cholesky
factors and positive-definite matrices, CDFs."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.transform_base import Transform
from runtime.distributions.utils import sum_rightmost

Tensor = Any


def _G() -> Any:
    return opcall.api


class IndependentTransform(Transform):
    """`base_transform` with its rightmost `reinterpreted_batch_ndims` dimensions treated as one event."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size) if cache_size else base_transform
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def sign(self) -> Any:  # type: ignore[override]
        return self.base_transform.sign

    def _call(self, x: Tensor) -> Tensor:
        return self.base_transform(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape: Any) -> Any:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the rightmost dimensions from `in_shape` to `out_shape` (same number of elements)."""

    bijective = True

    def __init__(self, in_shape: Sequence[int], out_shape: Sequence[int], cache_size: int = 0) -> None:
        self.in_shape, self.out_shape = tuple(in_shape), tuple(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.out_shape))

    def _call(self, x: Tensor) -> Tensor:
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(*batch, *self.out_shape)

    def _inverse(self, y: Tensor) -> Tensor:
        batch = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(*batch, *self.in_shape)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return _G().zeros(*batch, dtype=x.dtype, device=x.device)

    def forward_shape(self, shape: Any) -> Any:
        cut = len(shape) - len(self.in_shape)
        if cut < 0 or tuple(shape[cut:]) != self.in_shape:
            raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got {self.in_shape}")
        return tuple(shape[:cut]) + self.out_shape

    def inverse_shape(self, shape: Any) -> Any:
        cut = len(shape) - len(self.out_shape)
        if cut < 0 or tuple(shape[cut:]) != self.out_shape:
            raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got {self.out_shape}")
        return tuple(shape[:cut]) + self.in_shape


class LowerCholeskyTransform(Transform):
    """An unconstrained square matrix to a lower-triangular one with positive diagonal (exp of the diagonal)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LowerCholeskyTransform)

    def __hash__(self) -> int:
        return hash(LowerCholeskyTransform)

    def _call(self, x: Tensor) -> Tensor:
        return x.tril(-1) + _embed(_diag(x).exp())

    def _inverse(self, y: Tensor) -> Tensor:
        return y.tril(-1) + _embed(_diag(y).log())


def _diag(x: Tensor) -> Tensor:
    return x.diagonal(0, -2, -1)


def _embed(v: Tensor) -> Tensor:
    G = _G()
    return v.unsqueeze(-1) * G.eye(v.shape[-1], dtype=v.dtype, device=v.device)


class PositiveDefiniteTransform(Transform):
    """An unconstrained square matrix to a positive-definite one: L L^T with L = LowerCholeskyTransform(x)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PositiveDefiniteTransform)

    def __hash__(self) -> int:
        return hash(PositiveDefiniteTransform)

    def _call(self, x: Tensor) -> Tensor:
        low = LowerCholeskyTransform()(x)
        return low @ low.transpose(-2, -1)

    def _inverse(self, y: Tensor) -> Tensor:
        return LowerCholeskyTransform().inv(_G().linalg.cholesky(y))


class CatTransform(Transform):
    """Applies `tseq[i]` to the i-th slice (of `lengths[i]` entries) along `dim`, and concatenates."""

    def __init__(self, tseq: Sequence[Transform], dim: int = 0, lengths: Sequence[int] | None = None,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) if cache_size else t for t in tseq]
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise ValueError("lengths must give one length per transform")
        self.dim = dim

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)

    def _slices(self, x: Tensor) -> list[Tensor]:
        out, start = [], 0
        for n in self.lengths:
            out.append(x.narrow(self.dim, start, n))
            start += n
        return out

    def _call(self, x: Tensor) -> Tensor:
        return _G().cat([t(v) for t, v in zip(self.transforms, self._slices(x), strict=True)], self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        return _G().cat([t.inv(v) for t, v in zip(self.transforms, self._slices(y), strict=True)], self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        G = _G()
        parts = [t.log_abs_det_jacobian(a, b) for t, a, b in
                 zip(self.transforms, self._slices(x), self._slices(y), strict=True)]
        return G.cat(parts, self.dim)


class StackTransform(Transform):
    """Applies `tseq[i]` to the i-th slice along `dim` (removed), and stacks."""

    def __init__(self, tseq: Sequence[Transform], dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) if cache_size else t for t in tseq]
        self.dim = dim

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return constraints.stack([t.codomain for t in self.transforms], self.dim)

    def _call(self, x: Tensor) -> Tensor:
        return _G().stack([t(v) for t, v in zip(self.transforms, x.unbind(self.dim), strict=True)], self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        return _G().stack([t.inv(v) for t, v in zip(self.transforms, y.unbind(self.dim), strict=True)], self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return _G().stack([t.log_abs_det_jacobian(a, b) for t, a, b in
                           zip(self.transforms, x.unbind(self.dim), y.unbind(self.dim), strict=True)], self.dim)


class CumulativeDistributionTransform(Transform):
    """x -> distribution.cdf(x): to the unit interval (log |det J| is the log density)."""

    bijective = True
    codomain = constraints.unit_interval
    sign = 1

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return self.distribution.support

    def _call(self, x: Tensor) -> Tensor:
        return self.distribution.cdf(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return self.distribution.log_prob(x)


__all__ = ["CatTransform", "CumulativeDistributionTransform", "IndependentTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "ReshapeTransform", "StackTransform"]
