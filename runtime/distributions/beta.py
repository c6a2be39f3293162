"""Beta(concentration1, concentration0)."""

from __future__ import annotations

from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.dirichlet import Dirichlet
from runtime.distributions.distribution import Distribution
from runtime.distributions.utils import broadcast_all

Tensor = Any


class Beta(Distribution):
    """Density x^(a-1) (1-x)^(b-1) / B(a, b) on [0, 1]: a two-component Dirichlet (samples without
    gradient, as Dirichlet's)."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = False

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        G = opcall.api
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(G.stack([self.concentration1, self.concentration0], -1),
                                    validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Beta:
        return Beta(self.concentration1.expand(*batch_shape), self.concentration0.expand(*batch_shape),
                    validate_args=False)

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        return self._dirichlet.sample(sample_shape)[..., 0]

    def log_prob(self, value: Tensor) -> Tensor:
        G = opcall.api
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = G.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()


__all__ = ["Beta"]
