"""MixtureSameFamily(mixture_distribution, component_distribution)."""

from __future__ import annotations

from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.categorical import Categorical
from runtime.distributions.distribution import Distribution

Tensor = Any


class MixtureSameFamily(Distribution):
    """A mixture whose components are the rightmost batch dimension of `component_distribution`, weighted by
    the Categorical `mixture_distribution`."""

    arg_constraints: dict[str, Any] = {}
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical, component_distribution: Distribution,
                 validate_args: bool | None = None) -> None:
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError("The Mixture distribution needs to be an instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of torch.distributions.Distribution")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        mdbs = tuple(mixture_distribution.batch_shape)
        cdbs = tuple(component_distribution.batch_shape)[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs), strict=False):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                                 f"`component_distribution.batch_shape`({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal `component_distribution."
                             f"batch_shape[-1]` ({kc})")
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(cdbs, component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MixtureSameFamily:
        shape = tuple(batch_shape)
        return MixtureSameFamily(self._mixture_distribution.expand(shape),
                                 self._component_distribution.expand(shape + (self._num_component,)),
                                 validate_args=False)

    @constraints.dependent_property
    def support(self) -> Any:
        return self._component_distribution.support

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    def _pad_probs(self) -> Tensor:
        probs = self._mixture_distribution.probs
        return probs.reshape(*probs.shape, *([1] * self._event_ndims))

    @property
    def mean(self) -> Tensor:
        return (self._pad_probs() * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        probs = self._pad_probs()
        dim = -1 - self._event_ndims
        mean_cond_var = (probs * self._component_distribution.variance).sum(dim)
        var_cond_mean = (probs * (self._component_distribution.mean - self._pad(self.mean)).pow(2)).sum(dim)
        return mean_cond_var + var_cond_mean

    def _pad(self, x: Tensor) -> Tensor:
        return x.unsqueeze(-1 - self._event_ndims)

    def cdf(self, x: Tensor) -> Tensor:
        x = self._pad(x)
        cdf_x = self._component_distribution.cdf(x)
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x: Tensor) -> Tensor:
        G = opcall.api
        if self._validate_args:
            self._validate_sample(x)
        x = self._pad(x)
        log_prob_x = self._component_distribution.log_prob(x)
        log_mix_prob = G.log_softmax(self._mixture_distribution.logits, -1)
        return (log_prob_x + log_mix_prob).logsumexp(-1)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        G = opcall.api
        with G.no_grad():
            sample_len = len(tuple(sample_shape))
            batch_len = len(self._batch_shape)
            gather_dim = sample_len + batch_len
            es = tuple(self._event_shape)
            mix_sample = self._mixture_distribution.sample(sample_shape)
            comp_samples = self._component_distribution.sample(sample_shape)
            index = mix_sample.reshape(*mix_sample.shape, 1, *([1] * len(es)))
            index = index.expand(*mix_sample.shape, 1, *es)
            return comp_samples.gather(gather_dim, index).squeeze(gather_dim)


__all__ = ["MixtureSameFamily"]
