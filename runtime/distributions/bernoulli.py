"""Bernoulli(probs | logits)."""

from __future__ import annotations

from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.distribution import Distribution
from runtime.distributions.utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

Tensor = Any


class Bernoulli(Distribution):
    """1 with probability `probs` (or sigmoid(`logits`)), else 0."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

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

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    def _expand_params(self) -> tuple[str, ...]:
        return ("probs",) if "probs" in self.__dict__ else ("logits",)

    def _param_event_dims(self, name: str) -> int:
        return 0

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        G = opcall.api
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return G.where(self.probs == 0.5, G.full_like(mode, float("nan")), mode)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    @property
    def param_shape(self) -> Any:
        return (self.probs if "probs" in self.__dict__ else self.logits).shape

    def sample(self, sample_shape: Any = ()) -> Tensor:
        G = opcall.api
        with G.no_grad():
            p = self.probs.expand(*self._extended_shape(sample_shape))
            return (G.rand(*p.shape, dtype=p.dtype, device=p.device) < p).to(p.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        G = opcall.api
        if self._validate_args:
            self._validate_sample(value)
        logits, value = G.broadcast_tensors(self.logits, value.to(self.logits.dtype))
        return value * logits - G.nn.functional.softplus(logits)

    def entropy(self) -> Tensor:
        G = opcall.api
        return G.nn.functional.softplus(self.logits) - self.probs * self.logits

    def enumerate_support(self, expand: bool = True) -> Tensor:
        G = opcall.api
        values = G.arange(2, dtype=self.probs.dtype, device=self.probs.device)
        values = values.reshape(-1, *([1] * len(self._batch_shape)))
        return values.expand(-1, *self._batch_shape) if expand else values


__all__ = ["Bernoulli"]
