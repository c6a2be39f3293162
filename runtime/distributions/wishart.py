"""Wishart(df, covariance_matrix | precision_matrix | scale_tril): the distribution of sums of df outer
products of Gaussian vectors, over positive-definite matrices."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.correlation import mvlgamma
from runtime.distributions.distribution import Distribution
from runtime.distributions.gamma_derived import Chi2
from runtime.distributions.special import digamma
from runtime.distributions.utils import lazy_property

Tensor = Any
_LOG_2 = math.log(2)


def _expand(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    return t if tuple(t.shape) == tuple(shape) else t.expand(*shape)


class Wishart(Distribution):
    """Wishart with `df` > p - 1 degrees of freedom and scale given by exactly one of covariance_matrix,
    precision_matrix or scale_tril (p x p, optional batch dims). `rsample` uses the Bartlett decomposition:
    gradients reach the scale parameters; the chi-squared draws (NumPy's sampler) carry none to df."""

    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True

    def __init__(self, df: Any, covariance_matrix: Tensor | None = None, precision_matrix: Tensor | None = None,
                 scale_tril: Tensor | None = None, validate_args: bool | None = None) -> None:
        G = opcall.api
        if (covariance_matrix is not None) + (precision_matrix is not None) + (scale_tril is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = next(m for m in (scale_tril, covariance_matrix, precision_matrix) if m is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        p = param.shape[-1]
        if isinstance(df, Number):
            batch_shape = tuple(param.shape[:-2])
            self.df = _expand(G.tensor(float(df), dtype=param.dtype, device=param.device), batch_shape)
        else:
            batch_shape = tuple(G.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = _expand(df, batch_shape)
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(*batch_shape, p, p)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(*batch_shape, p, p)
        else:
            self.precision_matrix = param.expand(*batch_shape, p, p)
        self.arg_constraints = dict(type(self).arg_constraints, df=constraints.greater_than(p - 1))
        super().__init__(batch_shape, (p, p), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = G.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = G.linalg.cholesky(G.linalg.inv(precision_matrix))

    def expand(self, batch_shape: Any, _instance: Any = None) -> Wishart:
        p = self._event_shape[-1]
        return Wishart(_expand(self.df, tuple(batch_shape)), scale_tril=self.scale_tril.expand(*batch_shape, p, p),
                       validate_args=self.__dict__.get("_validate_args"))

    @lazy_property
    def scale_tril(self) -> Tensor:
        p = self._event_shape[-1]
        return self._unbroadcasted_scale_tril.expand(*self._batch_shape, p, p)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        low = self._unbroadcasted_scale_tril
        p = self._event_shape[-1]
        return (low @ low.transpose(-2, -1)).expand(*self._batch_shape, p, p)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        p = self._event_shape[-1]
        return opcall.api.linalg.inv(self.covariance_matrix).expand(*self._batch_shape, p, p)

    def _df(self) -> Tensor:
        return self.df.reshape(*self._batch_shape, 1, 1)

    @property
    def mean(self) -> Tensor:
        return self._df() * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        p = self._event_shape[-1]
        return (self._df() - p - 1).clamp(min=0) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        v = self.covariance_matrix
        d = v.diagonal(dim1=-2, dim2=-1)
        return self._df() * (v.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        G = opcall.api
        p = self._event_shape[-1]
        sample_shape = tuple(sample_shape)
        dtype, device = self._unbroadcasted_scale_tril.dtype, self._unbroadcasted_scale_tril.device
        with G.no_grad():
            dofs = self.df.unsqueeze(-1) - G.arange(p, dtype=dtype, device=device)
            chi = Chi2(dofs).sample(sample_shape).sqrt().clamp(min=G.finfo(dtype).eps)
            below = G.randn(*sample_shape, *self._batch_shape, p, p, dtype=dtype, device=device).tril(-1)
            noise = below + G.diag_embed(chi)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with opcall.api.no_grad():
            return self.rsample(sample_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        G = opcall.api
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        low = self._unbroadcasted_scale_tril
        log_det_low = low.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        # tr(Sigma^-1 X) with Sigma = L L^T: solve L Y = X, then L^T Z = Y
        y = G.linalg.solve_triangular(low, value, upper=False)
        z = G.linalg.solve_triangular(low.transpose(-2, -1), y, upper=True)
        trace = z.diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _LOG_2 / 2 + log_det_low) - mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * G.linalg.slogdet(value)[1] - trace / 2)

    def entropy(self) -> Tensor:
        G = opcall.api
        nu, p = self.df, self._event_shape[-1]
        log_det_low = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        halves = G.arange(p, dtype=nu.dtype, device=nu.device) / 2
        mvdigamma = digamma(nu.unsqueeze(-1) / 2 - halves).sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + log_det_low) + mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * mvdigamma + nu * p / 2)


__all__ = ["Wishart"]
