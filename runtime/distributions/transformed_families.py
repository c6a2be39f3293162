"""Families defined as transforms of simpler ones: Gumbel, Weibull, Pareto, Kumaraswamy, LogisticNormal."""

from __future__ import annotations

import math
from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.exponential import Exponential
from runtime.distributions.normal import Normal
from runtime.distributions.special import digamma, lgamma
from runtime.distributions.transformed_distribution import TransformedDistribution
from runtime.distributions.transforms import AffineTransform, ExpTransform, PowerTransform, StickBreakingTransform
from runtime.distributions.uniform import Uniform
from runtime.distributions.utils import broadcast_all

Tensor = Any
EULER_GAMMA = 0.57721566490153286060


class Gumbel(TransformedDistribution):
    """loc - scale * log(-log U), U uniform."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        G = opcall.api
        self._loc, self._scale = broadcast_all(loc, scale)
        finfo = G.finfo(self._loc.dtype)
        base = Uniform(G.full_like(self._loc, finfo.tiny), G.full_like(self._loc, 1 - finfo.eps),
                       validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(0, -1.0), ExpTransform().inv,
                      AffineTransform(self._loc, -self._scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gumbel:
        return Gumbel(self.loc.expand(*batch_shape), self.scale.expand(*batch_shape), validate_args=False)

    @property
    def loc(self) -> Tensor:
        return self._loc

    @property
    def scale(self) -> Tensor:
        return self._scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * EULER_GAMMA

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + EULER_GAMMA)


class Weibull(TransformedDistribution):
    """scale * E^(1 / concentration), E ~ Exponential(1)."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        G = opcall.api
        self._scale, self._concentration = broadcast_all(scale, concentration)
        base = Exponential(G.ones_like(self._scale), validate_args=validate_args)
        transforms = [PowerTransform(self._concentration.reciprocal()), AffineTransform(0, self._scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Weibull:
        return Weibull(self.scale.expand(*batch_shape), self.concentration.expand(*batch_shape),
                       validate_args=False)

    @property
    def scale(self) -> Tensor:
        return self._scale

    @property
    def concentration(self) -> Tensor:
        return self._concentration

    @property
    def mean(self) -> Tensor:
        return self.scale * lgamma(1 + self.concentration.reciprocal()).exp()

    @property
    def mode(self) -> Tensor:
        c = self.concentration
        return self.scale * ((c - 1) / c) ** c.reciprocal()  # NaN for concentration < 1, as PyTorch

    @property
    def variance(self) -> Tensor:
        inv = self.concentration.reciprocal()
        return self.scale.pow(2) * (lgamma(1 + 2 * inv).exp() - lgamma(1 + inv).exp().pow(2))

    def entropy(self) -> Tensor:
        c = self.concentration
        return EULER_GAMMA * (1 - c.reciprocal()) + (self.scale / c).log() + 1


class Pareto(TransformedDistribution):
    """scale * exp(E), E ~ Exponential(alpha): support [scale, inf)."""

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}
    has_rsample = True

    def __init__(self, scale: Any, alpha: Any, validate_args: bool | None = None) -> None:
        self._scale, self._alpha = broadcast_all(scale, alpha)
        base = Exponential(self._alpha, validate_args=validate_args)
        super().__init__(base, [ExpTransform(), AffineTransform(0, self._scale)], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Pareto:
        return Pareto(self.scale.expand(*batch_shape), self.alpha.expand(*batch_shape), validate_args=False)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> Any:
        return constraints.greater_than_eq(self.scale)

    @property
    def scale(self) -> Tensor:
        return self._scale

    @property
    def alpha(self) -> Tensor:
        return self._alpha

    @property
    def mean(self) -> Tensor:
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    def entropy(self) -> Tensor:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class Kumaraswamy(TransformedDistribution):
    """(1 - U^(1/concentration0))^(1/concentration1), U uniform on (0, 1)."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        G = opcall.api
        self._c1, self._c0 = broadcast_all(concentration1, concentration0)
        base = Uniform(G.full_like(self._c0, 0), G.full_like(self._c0, 1), validate_args=validate_args)
        transforms = [PowerTransform(self._c0.reciprocal()), AffineTransform(1.0, -1.0),
                      PowerTransform(self._c1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Kumaraswamy:
        return Kumaraswamy(self._c1.expand(*batch_shape), self._c0.expand(*batch_shape), validate_args=False)

    @property
    def concentration1(self) -> Tensor:
        return self._c1

    @property
    def concentration0(self) -> Tensor:
        return self._c0

    def _moments(self, n: int) -> Tensor:
        arg1 = 1 + n / self._c1
        return self._c0 * (lgamma(arg1) + lgamma(self._c0) - lgamma(arg1 + self._c0)).exp()

    @property
    def mean(self) -> Tensor:
        return self._moments(1)

    @property
    def mode(self) -> Tensor:
        G = opcall.api
        log_mode = self._c1.reciprocal() * ((self._c1 - 1).log() - (self._c1 * self._c0 - 1).log())
        out = log_mode.exp()
        return G.where((self._c0 < 1) | (self._c1 < 1), G.full_like(out, float("nan")), out)

    @property
    def variance(self) -> Tensor:
        return self._moments(2) - self._moments(1).pow(2)

    def entropy(self) -> Tensor:
        t1 = 1 - self._c1.reciprocal()
        t0 = 1 - self._c0.reciprocal()
        h0 = digamma(self._c0 + 1) + EULER_GAMMA
        return t0 + t1 * h0 - self._c1.log() - self._c0.log()


class LogisticNormal(TransformedDistribution):
    """StickBreakingTransform of Normal(loc, scale) over the last dimension: a distribution on the simplex."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogisticNormal:
        k = self.loc.shape[-1]
        return LogisticNormal(self.loc.expand(*batch_shape, k), self.scale.expand(*batch_shape, k),
                              validate_args=False)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.base_dist.scale


__all__ = ["Gumbel", "Kumaraswamy", "LogisticNormal", "Pareto", "Weibull"]
