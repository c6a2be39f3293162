"""Poisson(rate)."""

from __future__ import annotations

from typing import Any

import runtime.distributions.constraints as constraints
from runtime.distributions.distribution import Distribution
from runtime.distributions.special import lgamma, xlogy
from runtime.distributions.utils import broadcast_all, draw_numpy

Tensor = Any


class Poisson(Distribution):
    """Counts k >= 0 with probability rate^k exp(-rate) / k!; samples from NumPy's sampler."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Any = ()) -> Tensor:
        return draw_numpy(lambda e, r, size: e.poisson(r, size=size), self._extended_shape(sample_shape),
                          self.rate, self.rate)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - lgamma(value + 1)


__all__ = ["Poisson"]
