"""ExponentialFamily: the base class PyTorch gives the families with natural parameters."""

from __future__ import annotations

from typing import Any

from runtime.distributions.distribution import Distribution


class ExponentialFamily(Distribution):
    """A distribution of the form exp(<t(x), theta> - F(theta) + k(x)). Subclasses may define
    `_natural_params` and `_log_normalizer`; opgen's families compute entropy in closed form instead."""

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Any) -> Any:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError


__all__ = ["ExponentialFamily"]
