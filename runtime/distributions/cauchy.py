"""Cauchy, HalfNormal and HalfCauchy: the Cauchy distribution and the folded Normal and Cauchy."""

from __future__ import annotations

import math
from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.distribution import Distribution
from runtime.distributions.normal import Normal
from runtime.distributions.transformed_distribution import TransformedDistribution
from runtime.distributions.transforms import AbsTransform
from runtime.distributions.utils import broadcast_all

Tensor = Any


class Cauchy(Distribution):
    """Density 1 / (pi scale (1 + ((x - loc) / scale)^2)); rsample inverts the CDF at a uniform draw."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return opcall.api.full_like(self.loc, float("nan"))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return opcall.api.full_like(self.loc, float("inf"))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        G = opcall.api
        u = G.rand(*self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + self.scale * (math.pi * (u - 0.5)).tan()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()


class _Folded(TransformedDistribution):
    """|X| for X symmetric about 0: density twice the base's on x >= 0."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    def log_prob(self, value: Tensor) -> Tensor:
        G = opcall.api
        if self._validate_args:
            self._validate_sample(value)
        lp = self.base_dist.log_prob(value) + math.log(2)
        return G.where(value >= 0, lp, G.full_like(lp, float("-inf")))

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)

    @property
    def mode(self) -> Tensor:
        return opcall.api.zeros_like(self.scale)


class HalfNormal(_Folded):
    """|X|, X ~ Normal(0, scale)."""

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        base = Normal(0, scale, validate_args=False)
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfNormal:
        return HalfNormal(self.scale.expand(*batch_shape), validate_args=False)

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_Folded):
    """|X|, X ~ Cauchy(0, scale)."""

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        base = Cauchy(0, scale, validate_args=False)
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfCauchy:
        return HalfCauchy(self.scale.expand(*batch_shape), validate_args=False)

    @property
    def mean(self) -> Tensor:
        return opcall.api.full_like(self.scale, float("inf"))

    @property
    def variance(self) -> Tensor:
        return opcall.api.full_like(self.scale, float("inf"))


__all__ = ["Cauchy", "HalfCauchy", "HalfNormal"]
