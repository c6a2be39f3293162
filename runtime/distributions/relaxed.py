"""Relaxed (Concrete / Gumbel-softmax) distributions and the straight-through OneHotCategorical."""

from __future__ import annotations

import math
from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.categorical import Categorical
from runtime.distributions.distribution import Distribution
from runtime.distributions.one_hot_categorical import OneHotCategorical
from runtime.distributions.special import lgamma
from runtime.distributions.transformed_distribution import TransformedDistribution
from runtime.distributions.transforms import ExpTransform, SigmoidTransform
from runtime.distributions.utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

Tensor = Any


class LogitRelaxedBernoulli(Distribution):
    """The logit of a RelaxedBernoulli sample: (logits + logistic noise) / temperature."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        self.temperature = temperature
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            param = self.probs
        else:
            (self.logits,) = broadcast_all(logits)
            param = self.logits
        super().__init__(param.shape, validate_args=validate_args)

    def _expand_params(self) -> tuple[str, ...]:
        return ("probs",) if "probs" in self.__dict__ else ("logits",)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        G = opcall.api
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(*shape))
        u = clamp_probs(G.rand(*shape, dtype=probs.dtype, device=probs.device))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return _log(self.temperature) + diff - 2 * opcall.api.nn.functional.softplus(diff)


def _log(t: Any) -> Any:
    return t.log() if hasattr(t, "log") else math.log(t)


class RelaxedBernoulli(TransformedDistribution):
    """sigmoid of a LogitRelaxedBernoulli: a differentiable relaxation of Bernoulli on (0, 1)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        base = LogitRelaxedBernoulli(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedBernoulli:
        if "probs" in self.base_dist.__dict__:
            return RelaxedBernoulli(self.temperature, probs=self.probs.expand(*batch_shape), validate_args=False)
        return RelaxedBernoulli(self.temperature, logits=self.logits.expand(*batch_shape), validate_args=False)

    @property
    def temperature(self) -> Any:
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical sample (Gumbel-softmax in log space)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature: Any, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        shape = self._categorical.param_shape
        super().__init__(self._categorical.batch_shape, shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ExpRelaxedCategorical:
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        G = opcall.api
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(G.rand(*shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-(u.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        G = opcall.api
        if self._validate_args:
            self._validate_sample(value)
        k = self._categorical._num_events
        logits, value = G.broadcast_tensors(self.logits, value)
        temperature = self.temperature if isinstance(self.temperature, G.Tensor) else \
            G.tensor(float(self.temperature), dtype=logits.dtype)
        log_scale = lgamma(G.full_like(temperature, float(k))) - temperature.log() * (-(k - 1))
        score = logits - value * temperature
        score = (score - score.logsumexp(-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """exp of an ExpRelaxedCategorical: a differentiable relaxation of OneHotCategorical on the simplex."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature: Any, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedOneHotCategorical:
        k = self.logits.shape[-1]
        return RelaxedOneHotCategorical(self.temperature, logits=self.logits.expand(*batch_shape, k),
                                        validate_args=False)

    @property
    def temperature(self) -> Any:
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose rsample is the sample plus (probs - probs.detach()): the forward value is
    one-hot and the gradient is that of the probabilities (the straight-through estimator)."""

    has_rsample = True

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


__all__ = ["ExpRelaxedCategorical", "LogitRelaxedBernoulli", "OneHotCategoricalStraightThrough",
           "RelaxedBernoulli", "RelaxedOneHotCategorical"]
