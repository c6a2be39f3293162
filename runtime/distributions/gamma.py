"""Gamma(concentration, rate)."""

from __future__ import annotations

from typing import Any

import runtime.distributions.constraints as constraints
from runtime.distributions.distribution import Distribution
from runtime.distributions.special import digamma, lgamma, xlogy
from runtime.distributions.utils import broadcast_all, draw_numpy

Tensor = Any


class Gamma(Distribution):
    """Density rate^c x^(c-1) exp(-rate x) / Gamma(c) on x > 0.

    Samples come from NumPy's gamma sampler on the default CPU generator and carry no gradient: opgen has
    no implicit reparameterisation for Gamma, so `has_rsample` is False and `rsample` raises."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = False

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x = draw_numpy(lambda e, c, size: e.standard_gamma(c, size=size), shape, self.concentration,
                       self.concentration)
        tiny = _tiny(x)
        return (x / self.rate.detach()).clamp(min=tiny)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return xlogy(c, r) + xlogy(c - 1, value) - r * value - lgamma(c)

    def entropy(self) -> Tensor:
        c = self.concentration
        return c - self.rate.log() + lgamma(c) + (1.0 - c) * digamma(c)


def _tiny(x: Tensor) -> float:
    from runtime import opcall
    return float(opcall.api.finfo(x.dtype).tiny)


__all__ = ["Gamma"]
