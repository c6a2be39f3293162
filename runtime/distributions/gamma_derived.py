"""Families built on Gamma: Chi2, InverseGamma, StudentT, FisherSnedecor."""

from __future__ import annotations

import math
from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.distribution import Distribution
from runtime.distributions.gamma import Gamma
from runtime.distributions.special import digamma, lgamma
from runtime.distributions.transformed_distribution import TransformedDistribution
from runtime.distributions.transforms import PowerTransform
from runtime.distributions.utils import broadcast_all, draw_numpy

Tensor = Any


def _where(cond: Tensor, a: Any, b: Tensor) -> Tensor:
    G = opcall.api
    return G.where(cond, a if isinstance(a, G.Tensor) else G.full_like(b, float(a)), b)


class Chi2(Gamma):
    """Gamma(df / 2, 1 / 2)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Any, validate_args: bool | None = None) -> None:
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, opcall.api.full_like(df, 0.5), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Chi2:
        return Chi2(self.df.expand(*batch_shape), validate_args=False)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2


class InverseGamma(TransformedDistribution):
    """1 / X for X ~ Gamma(concentration, rate) (samples without gradient, as Gamma's)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = False

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(-1.0), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> InverseGamma:
        return InverseGamma(self.concentration.expand(*batch_shape), self.rate.expand(*batch_shape),
                            validate_args=False)

    @property
    def concentration(self) -> Tensor:
        return self.base_dist.concentration

    @property
    def rate(self) -> Tensor:
        return self.base_dist.rate

    @property
    def mean(self) -> Tensor:
        c = self.concentration
        return _where(c > 1, self.rate / (c - 1), opcall.api.full_like(c, float("inf")))

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        return _where(c > 2, self.rate.pow(2) / ((c - 1).pow(2) * (c - 2)), opcall.api.full_like(c, float("inf")))

    def entropy(self) -> Tensor:
        c = self.concentration
        return c + self.rate.log() + lgamma(c) - (1 + c) * digamma(c)


class StudentT(Distribution):
    """Student's t with `df` degrees of freedom, location and scale. `rsample` is loc + scale * Z /
    sqrt(V / df) with Z a standard normal draw and V a chi-square draw from NumPy: gradients reach loc and
    scale, not df."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0, validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        super().__init__(self.df.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return _where(self.df > 1, self.loc, opcall.api.full_like(self.loc, float("nan")))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        G = opcall.api
        df = self.df
        var = self.scale.pow(2) * df / (df - 2)
        var = _where(df <= 2, G.full_like(var, float("inf")), var)
        return _where(df <= 1, G.full_like(var, float("nan")), var)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        G = opcall.api
        shape = self._extended_shape(sample_shape)
        z = G.randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        v = draw_numpy(lambda e, d, size: e.chisquare(d, size=size), shape, self.df, self.df)
        return self.loc + self.scale * z * (self.df.detach() / v).sqrt()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + lgamma(0.5 * self.df)
             - lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * (y.pow(2) / self.df).log1p() - z

    def entropy(self) -> Tensor:
        df = self.df
        lbeta = lgamma(0.5 * df) + math.lgamma(0.5) - lgamma(0.5 * (df + 1))
        return (self.scale.log() + 0.5 * (df + 1) * (digamma(0.5 * (df + 1)) - digamma(0.5 * df))
                + 0.5 * df.log() + lbeta)


class FisherSnedecor(Distribution):
    """The F distribution with df1 and df2 degrees of freedom (samples from NumPy, no gradient)."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive

    def __init__(self, df1: Any, df2: Any, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        super().__init__(self.df1.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return _where(self.df2 > 2, self.df2 / (self.df2 - 2), opcall.api.full_like(self.df2, float("nan")))

    @property
    def mode(self) -> Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return _where(self.df1 > 2, mode, opcall.api.full_like(mode, float("nan")))

    @property
    def variance(self) -> Tensor:
        d1, d2 = self.df1, self.df2
        var = 2 * d2.pow(2) * (d1 + d2 - 2) / (d1 * (d2 - 2).pow(2) * (d2 - 4))
        return _where(d2 > 4, var, opcall.api.full_like(var, float("nan")))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        return draw_numpy(lambda e, a, b, size: e.f(a, b, size=size), self._extended_shape(sample_shape),
                          self.df1, self.df1, self.df2)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2 = self.df1 * 0.5, self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = lgamma(ct1 + ct2) - lgamma(ct1) - lgamma(ct2)
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3


__all__ = ["Chi2", "FisherSnedecor", "InverseGamma", "StudentT"]
