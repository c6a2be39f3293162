"""VonMises(loc, concentration): the circular normal distribution on angles."""

from __future__ import annotations

import math
from typing import Any

import runtime.distributions.constraints as constraints
from runtime.distributions.distribution import Distribution
from runtime.distributions.utils import broadcast_all, draw_numpy, lazy_property

Tensor = Any

# Abramowitz & Stegun 9.8.1-9.8.4: polynomial approximations of I0 and I1 (scaled by exp(-x) sqrt(x) for
# x >= 3.75); PyTorch's VonMises uses the same ones, so densities agree to rounding
_I0_SMALL = (1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2)
_I0_LARGE = (0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1, 0.2635537e-1,
             -0.1647633e-1, 0.392377e-2)
_I1_SMALL = (0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3)
_I1_LARGE = (0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1, 0.2282967e-1, -0.2895312e-1,
             0.1787654e-1, -0.420059e-2)


def _horner(y: Tensor, coef: tuple[float, ...]) -> Tensor:
    result = y * 0 + coef[-1]
    for c in reversed(coef[:-1]):
        result = result * y + c
    return result


def log_bessel_i(x: Tensor, order: int = 0) -> Tensor:
    """log I_order(x) for x > 0, order 0 or 1 (the approximations above)."""
    from runtime import opcall
    if order not in (0, 1):
        raise ValueError(f"order must be 0 or 1, got {order}")
    small_c, large_c = (_I0_SMALL, _I0_LARGE) if order == 0 else (_I1_SMALL, _I1_LARGE)
    small = _horner((x / 3.75).pow(2), small_c)
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _horner(3.75 / x, large_c).log()
    return opcall.api.where(x < 3.75, small.log(), large)


class VonMises(Distribution):
    """Density exp(concentration * cos(x - loc)) / (2 pi I0(concentration)) on angles; samples in [-pi, pi)
    from NumPy's von Mises sampler on the default CPU generator (no rsample, as in PyTorch)."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args=validate_args)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - log_bessel_i(self.concentration, 0))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x = draw_numpy(lambda e, mu, k, size: e.vonmises(mu, k, size=size), shape, self.loc, self.loc,
                       self.concentration)
        return (x + math.pi) % (2 * math.pi) - math.pi

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        return VonMises(self.loc.expand(batch_shape), self.concentration.expand(batch_shape),
                        validate_args=self.__dict__.get("_validate_args"))

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        """1 - I1(k)/I0(k), the circular variance (PyTorch's meaning of variance here)."""
        k = self.concentration
        return 1 - (log_bessel_i(k, 1) - log_bessel_i(k, 0)).exp()


__all__ = ["VonMises"]
