"""Binomial(total_count, probs | logits)."""

from __future__ import annotations

from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.distribution import Distribution
from runtime.distributions.special import lgamma
from runtime.distributions.utils import broadcast_all, draw_numpy, lazy_property, logits_to_probs, probs_to_logits

Tensor = Any


class Binomial(Distribution):
    """The number of successes in `total_count` Bernoulli(probs) trials; samples from NumPy's sampler."""

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
            param = self.probs
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
            param = self.logits
        super().__init__(param.shape, validate_args=validate_args)

    def _expand_params(self) -> tuple[str, ...]:
        return ("total_count", "probs") if "probs" in self.__dict__ else ("total_count", "logits")

    def _param_event_dims(self, name: str) -> int:
        return 0

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self.total_count)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        return draw_numpy(lambda e, n, p, size: e.binomial(n.astype("int64"), p, size=size),
                          self._extended_shape(sample_shape), self.probs, self.total_count, self.probs)

    def log_prob(self, value: Tensor) -> Tensor:
        G = opcall.api
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_comb = lgamma(n + 1) - lgamma(value + 1) - lgamma(n - value + 1)
        # k log p + (n - k) log(1 - p) = k * logits - n * softplus(logits)
        return log_comb + value * self.logits - n * G.nn.functional.softplus(self.logits)

    def entropy(self) -> Tensor:
        n = int(self.total_count.max().item())
        if not bool((self.total_count == n).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        lp = self.log_prob(self.enumerate_support(False))
        return -(lp.exp() * lp).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        G = opcall.api
        n = int(self.total_count.max().item())
        if not bool((self.total_count == n).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = G.arange(1 + n, dtype=self.probs.dtype, device=self.probs.device)
        values = values.reshape(-1, *([1] * len(self._batch_shape)))
        return values.expand(-1, *self._batch_shape) if expand else values


__all__ = ["Binomial"]
