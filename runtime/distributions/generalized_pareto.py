"""GeneralizedPareto(loc, scale, concentration)."""

from __future__ import annotations

import math
from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.distribution import Distribution
from runtime.distributions.utils import broadcast_all

Tensor = Any


class GeneralizedPareto(Distribution):
    """Density (1/scale) (1 + c z)^-(1/c + 1), z = (x - loc) / scale (the exponential exp(-z) / scale at
    c = 0); support [loc, loc - scale / c] for c < 0, [loc, inf) otherwise. rsample inverts the CDF."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> Any:
        G = opcall.api
        upper = G.where(self.concentration < 0, self.loc - self.scale / self.concentration,
                        G.full_like(self.loc, float("inf")))
        return constraints.interval(self.loc, upper)

    def _safe(self) -> tuple[Tensor, Tensor]:
        G = opcall.api
        zero = self.concentration.abs() <= 1e-8
        return zero, G.where(zero, G.ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        G = opcall.api
        u = G.rand(*self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        G = opcall.api
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, c = self._safe()
        power = 1 / c + 1
        nonzero = G.where(power == 0, power, power * (c * z).log1p())
        return -self.scale.log() - G.where(zero, z, nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        G = opcall.api
        z = (value - self.loc) / self.scale
        zero, c = self._safe()
        return G.where(zero, -z, -(c * z).log1p() / c)

    def log_cdf(self, value: Tensor) -> Tensor:
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.log_cdf(value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        G = opcall.api
        zero, c = self._safe()
        logu = (-value).log1p()
        return G.where(zero, self.loc - self.scale * logu, self.loc + self.scale / c * (-c * logu).expm1())

    @property
    def mean(self) -> Tensor:
        G = opcall.api
        valid = self.concentration < 1
        c = G.where(valid, self.concentration, G.full_like(self.concentration, 0.5))
        return G.where(valid, self.loc + self.scale / (1 - c), G.full_like(self.loc, math.nan))

    @property
    def variance(self) -> Tensor:
        G = opcall.api
        valid = self.concentration < 0.5
        c = G.where(valid, self.concentration, G.full_like(self.concentration, 0.25))
        return G.where(valid, self.scale ** 2 / ((1 - c) ** 2 * (1 - 2 * c)), G.full_like(self.loc, math.nan))

    @property
    def mode(self) -> Tensor:
        return self.loc

    def entropy(self) -> Tensor:
        return (self.scale.log() + self.concentration + 1).expand(*self._batch_shape)


__all__ = ["GeneralizedPareto"]
