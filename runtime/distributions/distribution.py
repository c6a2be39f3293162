"""The Distribution base class (torch.distributions.Distribution).

Note [Distribution shapes and validation]
A distribution holds a batch of independent distributions (`batch_shape`), each over events of
`event_shape`. `sample(sample_shape)` has shape sample_shape + batch_shape + event_shape, and `log_prob(v)`
gives one value per event, so its shape is v's without the event dimensions. With `validate_args` (on by
default, as in PyTorch; `Distribution.set_default_validate_args(False)` turns it off), the constructor
checks each parameter against its `arg_constraints` entry and raises ValueError naming the parameter and
the constraint, and `log_prob` checks that the value is in the `support`.
"""

from __future__ import annotations

from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.utils import lazy_property

Tensor = Any


def _G() -> Any:
    return opcall.api


class Distribution:
    """Base class of probability distributions (Note [Distribution shapes and validation])."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True
    arg_constraints: dict[str, constraints.Constraint] = {}
    support: Any = None

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        if value not in (True, False):
            raise ValueError("set_default_validate_args expects a bool")
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = (), event_shape: Any = (), validate_args: bool | None = None) -> None:
        G = _G()
        self._batch_shape = G.Size(batch_shape)
        self._event_shape = G.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self) -> None:
        for param, constraint in self.arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                continue  # a parameter derived from the one given
            value = getattr(self, param)
            valid = constraint.check(value)
            if not bool(valid.all()):
                raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {self!r} to satisfy the constraint {constraint!r}, but found "
                                 f"invalid values:\n{value}")

    # -- shapes ------------------------------------------------------------------------------------------
    @property
    def batch_shape(self) -> Any:
        return self._batch_shape

    @property
    def event_shape(self) -> Any:
        return self._event_shape

    def _extended_shape(self, sample_shape: Any = ()) -> Any:
        G = _G()
        return G.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        """The same distribution broadcast to `batch_shape` (parameters expanded, not copied)."""
        G = _G()
        batch_shape = G.Size(batch_shape)
        new = self._get_checked_instance(type(self), _instance)
        for name in self._expand_params():
            value = self.__dict__.get(name)
            if value is None:
                continue
            extra = value.shape[value.dim() - self._param_event_dims(name):] if self._param_event_dims(name) else ()
            setattr(new, name, value.expand(*batch_shape, *extra))
        for key, value in self.__dict__.items():
            if key not in new.__dict__ and not key.startswith("_") and not isinstance(value, G.Tensor):
                new.__dict__[key] = value
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _expand_params(self) -> tuple[str, ...]:
        return tuple(self.arg_constraints)

    def _param_event_dims(self, name: str) -> int:
        return len(self._event_shape) if name in ("probs", "logits") else 0

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      f"__init__ method must also define a custom .expand() method.")
        return cls.__new__(type(self)) if _instance is None else _instance

    # -- moments and properties ----------------------------------------------------------------------------
    @property
    def mean(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement mean")

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement variance")

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def entropy(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    # -- sampling and densities ------------------------------------------------------------------------------
    def sample(self, sample_shape: Any = ()) -> Tensor:
        """A sample (no gradient flows to the parameters)."""
        with _G().no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement rsample (no reparameterised "
                                  f"sampling)")

    def sample_n(self, n: int) -> Tensor:
        return self.sample((n,))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement enumerate_support")

    def _validate_sample(self, value: Tensor) -> None:
        G = _G()
        if not isinstance(value, G.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: {tuple(value.shape)} vs "
                             f"{tuple(self._event_shape)}.")
        actual = tuple(value.shape)
        expected = tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(actual), reversed(expected), strict=False):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual} vs {expected}.")
        support = self.support
        if support is None or constraints.is_dependent(support):
            return
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {actual}) to be within the "
                             f"support ({support!r}) of the distribution {self!r}, but found invalid values:\n"
                             f"{value}")

    def __repr__(self) -> str:
        G = _G()
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(
            f"{k}: {self.__dict__[k] if self.__dict__[k].numel() == 1 else self.__dict__[k].size()}"
            if isinstance(self.__dict__[k], G.Tensor) else f"{k}: {self.__dict__[k]}" for k in names)
        return f"{type(self).__name__}({args})"


__all__ = ["Distribution"]
