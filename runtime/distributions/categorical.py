"""Categorical(probs | logits): one of K categories."""

from __future__ import annotations

from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.distribution import Distribution
from runtime.distributions.utils import lazy_property, logits_to_probs, probs_to_logits

Tensor = Any


class Categorical(Distribution):
    """Index i in [0, K) with probability probs[..., i] (normalised over the last dimension), or
    softmax(logits)[..., i]. Samples are drawn by inverting the CDF at a uniform draw."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            param = self.probs
        else:
            if logits.dim() < 1:  # type: ignore[union-attr]
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)  # type: ignore[union-attr]
            param = self.logits
        self._num_events = param.shape[-1]
        batch_shape = param.shape[:-1] if param.dim() > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Categorical:
        new = self._get_checked_instance(Categorical, _instance)
        shape = (*batch_shape, self._num_events)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(*shape)
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(*shape)
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Any:
        return (self.probs if "probs" in self.__dict__ else self.logits).shape

    @property
    def mean(self) -> Tensor:
        G = opcall.api
        return G.full(tuple(self._extended_shape()), float("nan"), dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return self.mean

    def sample(self, sample_shape: Any = ()) -> Tensor:
        G = opcall.api
        with G.no_grad():
            probs = self.probs
            cdf = probs.cumsum(-1)
            shape = tuple(self._extended_shape(sample_shape))
            u = G.rand(*shape, 1, dtype=probs.dtype, device=probs.device) * cdf[..., -1:]
            idx = (cdf.expand(*shape, self._num_events) <= u).sum(-1)
            return idx.clamp(max=self._num_events - 1).to(G.int64)

    def log_prob(self, value: Tensor) -> Tensor:
        G = opcall.api
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = G.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self) -> Tensor:
        G = opcall.api
        min_real = G.finfo(self.logits.dtype).min
        logits = self.logits.clamp(min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        G = opcall.api
        values = G.arange(self._num_events, dtype=G.int64, device=self.probs.device)
        values = values.reshape(-1, *([1] * len(self._batch_shape)))
        return values.expand(-1, *self._batch_shape) if expand else values


__all__ = ["Categorical"]
