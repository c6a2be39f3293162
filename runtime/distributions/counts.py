"""Count distributions beside Poisson and Binomial: Geometric and NegativeBinomial."""

from __future__ import annotations

from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.distribution import Distribution
from runtime.distributions.special import lgamma
from runtime.distributions.utils import broadcast_all, draw_numpy, lazy_property, logits_to_probs, probs_to_logits

Tensor = Any


class Geometric(Distribution):
    """The number of failures before the first success of Bernoulli(probs) trials."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            param = self.probs
        else:
            (self.logits,) = broadcast_all(logits)
            param = self.logits
        super().__init__(param.shape, validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            raise ValueError(f"Expected parameter probs of distribution {self!r} to be in (0, 1], but found "
                             f"zeros:\n{self.probs}")

    def _expand_params(self) -> tuple[str, ...]:
        return ("probs",) if "probs" in self.__dict__ else ("logits",)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return opcall.api.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = ()) -> Tensor:
        G = opcall.api
        with G.no_grad():
            p = self.probs.expand(*self._extended_shape(sample_shape))
            tiny = G.finfo(p.dtype).tiny
            u = G.rand(*p.shape, dtype=p.dtype, device=p.device).clamp(min=tiny)
            return (u.log() / (-p).log1p()).floor()

    def log_prob(self, value: Tensor) -> Tensor:
        G = opcall.api
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        safe = G.where((probs == 1) & (value == 0), G.zeros_like(probs), probs)
        return value * (-safe).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        F = opcall.api.nn.functional
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs


class NegativeBinomial(Distribution):
    """The number of successes (probability `probs`) before `total_count` failures."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
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

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    def sample(self, sample_shape: Any = ()) -> Tensor:
        return draw_numpy(lambda e, n, p, size: e.negative_binomial(n, 1.0 - p, size=size),
                          self._extended_shape(sample_shape), self.probs, self.total_count, self.probs)

    def log_prob(self, value: Tensor) -> Tensor:
        G = opcall.api
        if self._validate_args:
            self._validate_sample(value)
        F = G.nn.functional
        log_unnormalized = self.total_count * -F.softplus(self.logits) + value * -F.softplus(-self.logits)
        log_normalization = -lgamma(self.total_count + value) + lgamma(1.0 + value) + lgamma(self.total_count)
        log_normalization = G.where(self.total_count + value == 0.0, G.zeros_like(log_normalization),
                                    log_normalization)
        return log_unnormalized - log_normalization


__all__ = ["Geometric", "NegativeBinomial"]
