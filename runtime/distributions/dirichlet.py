"""Dirichlet(concentration)."""

from __future__ import annotations

from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.distribution import Distribution
from runtime.distributions.special import digamma, lgamma
from runtime.distributions.utils import draw_numpy

Tensor = Any


class Dirichlet(Distribution):
    """A distribution over the simplex; samples are normalised Gamma draws (no gradient: `has_rsample` is
    False, as for Gamma)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = False

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def _param_event_dims(self, name: str) -> int:
        return 1

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        G = opcall.api
        c = (self.concentration - 1).clamp(min=0.0)
        mode = c / c.sum(-1, keepdim=True)
        below = (self.concentration < 1).all(-1)
        if bool(below.any()):
            onehot = G.nn.functional.one_hot(self.concentration.argmax(-1), self.concentration.shape[-1])
            mode = G.where(below.unsqueeze(-1), onehot.to(mode.dtype), mode)
        return mode

    @property
    def variance(self) -> Tensor:
        c0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (c0 - self.concentration) / (c0.pow(2) * (c0 + 1))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x = draw_numpy(lambda e, c, size: e.standard_gamma(c, size=size), shape, self.concentration,
                       self.concentration)
        tiny = float(opcall.api.finfo(x.dtype).tiny)
        x = x.clamp(min=tiny)
        return x / x.sum(-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return ((c - 1) * value.log()).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.shape[-1]
        c0 = c.sum(-1)
        return lgamma(c).sum(-1) - lgamma(c0) - (k - c0) * digamma(c0) - ((c - 1.0) * digamma(c)).sum(-1)


__all__ = ["Dirichlet"]
