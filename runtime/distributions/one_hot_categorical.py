"""OneHotCategorical(probs | logits): a Categorical whose values are one-hot vectors."""

from __future__ import annotations

from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.categorical import Categorical
from runtime.distributions.distribution import Distribution

Tensor = Any


class OneHotCategorical(Distribution):
    """Samples are one-hot vectors of length K (event_shape (K,))."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        param = self._categorical.param_shape
        super().__init__(self._categorical.batch_shape, param[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> OneHotCategorical:
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

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
        return self._categorical.probs

    @property
    def mode(self) -> Tensor:
        G = opcall.api
        probs = self._categorical.probs
        return G.nn.functional.one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self) -> Tensor:
        p = self._categorical.probs
        return p * (1 - p)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        G = opcall.api
        probs = self._categorical.probs
        idx = self._categorical.sample(sample_shape)
        return G.nn.functional.one_hot(idx, probs.shape[-1]).to(probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        G = opcall.api
        n = self._event_shape[0]
        values = G.eye(n, dtype=self.probs.dtype, device=self.probs.device)
        values = values.reshape(n, *([1] * len(self._batch_shape)), n)
        return values.expand(n, *self._batch_shape, n) if expand else values

    def __repr__(self) -> str:
        return f"OneHotCategorical(probs: {self.probs.size()})"


__all__ = ["OneHotCategorical"]
