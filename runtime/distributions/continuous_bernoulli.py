"""ContinuousBernoulli(probs | logits): the density C(p) p^x (1 - p)^(1 - x) on [0, 1]."""

from __future__ import annotations

import math
from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.distribution import Distribution
from runtime.distributions.utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

Tensor = Any


class ContinuousBernoulli(Distribution):
    """The continuous relaxation of Bernoulli with normaliser C(p). Near p = 1/2 (inside `lims`) the
    closed forms lose precision, so the normaliser, mean and variance use their Taylor series there.
    rsample inverts the CDF at a uniform draw."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, probs: Any = None, logits: Any = None, lims: tuple[float, float] = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (probs,) = broadcast_all(probs)
            if validate_args is not False and Distribution._validate_args:
                if not bool(constraints.unit_interval.check(probs).all()):
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(probs)
            param = self.probs
        else:
            (self.logits,) = broadcast_all(logits)
            param = self.logits
        self._lims = lims
        super().__init__(param.shape, validate_args=validate_args)

    def _expand_params(self) -> tuple[str, ...]:
        return ("probs",) if "probs" in self.__dict__ else ("logits",)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _outside(self) -> Tensor:
        return (self.probs < self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        G = opcall.api
        return G.where(self._outside(), self.probs, G.full_like(self.probs, self._lims[0]))

    def _log_normalizer(self) -> Tensor:
        G = opcall.api
        p = self._cut_probs()
        below = G.where(p <= 0.5, p, G.zeros_like(p))
        above = G.where(p >= 0.5, p, G.ones_like(p))
        log_norm = ((-p).log1p() - p.log()).abs().log() - G.where(
            p <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return G.where(self._outside(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        G = opcall.api
        p = self._cut_probs()
        mus = p / (2.0 * p - 1.0) + 1.0 / ((-p).log1p() - p.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x ** 2) * x
        return G.where(self._outside(), mus, taylor)

    @property
    def variance(self) -> Tensor:
        G = opcall.api
        p = self._cut_probs()
        vars_ = p * (p - 1.0) / (1.0 - 2.0 * p) ** 2 + 1.0 / ((-p).log1p() - p.log()) ** 2
        x = (self.probs - 0.5) ** 2
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return G.where(self._outside(), vars_, taylor)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        G = opcall.api
        u = G.rand(*self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        F = opcall.api.nn.functional
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none") + self._log_normalizer()

    def cdf(self, value: Tensor) -> Tensor:
        G = opcall.api
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        cdfs = (p ** value * (1.0 - p) ** (1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        unbounded = G.where(self._outside(), cdfs, value)
        return G.where(value <= 0.0, G.zeros_like(value), G.where(value >= 1.0, G.ones_like(value), unbounded))

    def icdf(self, value: Tensor) -> Tensor:
        G = opcall.api
        p = self._cut_probs()
        inv = ((-p + value * (2.0 * p - 1.0)).log1p() - (-p).log1p()) / (p.log() - (-p).log1p())
        return G.where(self._outside(), inv, value)

    def entropy(self) -> Tensor:
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._log_normalizer() - log_probs0


__all__ = ["ContinuousBernoulli"]
