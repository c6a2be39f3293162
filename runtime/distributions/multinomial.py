"""Multinomial(total_count, probs | logits)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.binomial import Binomial
from runtime.distributions.categorical import Categorical
from runtime.distributions.distribution import Distribution
from runtime.distributions.special import lgamma
from runtime.random import default_generator

Tensor = Any


class Multinomial(Distribution):
    """Counts of K categories over `total_count` Categorical draws (event_shape (K,)); samples from NumPy's
    sampler on the default CPU generator."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}

    def __init__(self, total_count: int = 1, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Multinomial:
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> constraints.Constraint:
        return constraints.independent(constraints.integer_interval(0, self.total_count), 1)

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def param_shape(self) -> Any:
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        G = opcall.api
        probs = self.probs.detach().cpu().numpy().astype(np.float64)
        probs = probs / probs.sum(-1, keepdims=True)
        shape = tuple(self._extended_shape(sample_shape))
        flat = np.broadcast_to(probs, shape).reshape(-1, shape[-1])
        engine = default_generator().engine()
        counts = np.stack([engine.multinomial(self.total_count, p) for p in flat]).reshape(shape)
        t = G.from_numpy(np.ascontiguousarray(counts).astype(self.probs.dtype.np))
        return t.to(self.probs.device) if self.probs.device.type != "cpu" else t

    def entropy(self) -> Tensor:
        """n H(categorical) - log n! + sum_i E[log x_i!], each x_i ~ Binomial(n, p_i)."""
        G = opcall.api
        probs = self.probs
        n = float(self.total_count)
        term1 = n * self._categorical.entropy() - math.lgamma(n + 1)
        binomial = Binomial(G.full_like(probs, n), probs=probs, validate_args=False)
        support = G.arange(1, self.total_count + 1, dtype=probs.dtype, device=probs.device)
        support = support.reshape(-1, *([1] * probs.dim()))
        weights = lgamma(support + 1)
        term2 = (binomial.log_prob(support).exp() * weights).sum(0).sum(-1)
        return term1 + term2

    def log_prob(self, value: Tensor) -> Tensor:
        G = opcall.api
        if self._validate_args:
            self._validate_sample(value)
        logits, value = G.broadcast_tensors(self.logits, value.to(self.logits.dtype))
        logits = G.where((value == 0) & (logits == float("-inf")), G.zeros_like(logits), logits)
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers


__all__ = ["Multinomial"]
