"""MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril)."""

from __future__ import annotations

import math
from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.distribution import Distribution
from runtime.distributions.utils import lazy_property

Tensor = Any


def _batch_mahalanobis(scale_tril: Tensor, diff: Tensor) -> Tensor:
    """|| L^-1 diff ||^2 over the last dimension (L lower triangular, broadcast over the batch)."""
    G = opcall.api
    shape = G.broadcast_shapes(tuple(scale_tril.shape[:-2]), tuple(diff.shape[:-1]))
    n = diff.shape[-1]
    lower = scale_tril.tril().expand(*shape, n, n)  # only the lower triangle is read, as a triangular solve does
    solved = G.linalg.solve(lower, diff.expand(*shape, n).unsqueeze(-1)).squeeze(-1)
    return solved.pow(2).sum(-1)


class MultivariateNormal(Distribution):
    """The Gaussian on R^k with mean `loc`, given by exactly one of its covariance, its precision or the
    lower Cholesky factor `scale_tril` of its covariance; rsample is loc + scale_tril @ eps."""

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None, precision_matrix: Tensor | None = None,
                 scale_tril: Tensor | None = None, validate_args: bool | None = None) -> None:
        G = opcall.api
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        matrix = next(m for m in (scale_tril, covariance_matrix, precision_matrix) if m is not None)
        if matrix.dim() < 2:
            raise ValueError("scale_tril, covariance_matrix or precision_matrix must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        batch_shape = G.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        k = loc.shape[-1]
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(*batch_shape, k, k)
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(*batch_shape, k, k)
        else:
            self.precision_matrix = precision_matrix.expand(*batch_shape, k, k)  # type: ignore[union-attr]
        self.loc = loc.expand(*batch_shape, k)
        super().__init__(batch_shape, (k,), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = G.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = G.linalg.cholesky(G.linalg.inv(precision_matrix))

    def _param_event_dims(self, name: str) -> int:
        return 1 if name == "loc" else 2

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        k = self._event_shape[0]
        new.loc = self.loc.expand(*batch_shape, k)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(*batch_shape, k, k))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self) -> Tensor:
        k = self._event_shape[0]
        return self._unbroadcasted_scale_tril.expand(*self._batch_shape, k, k)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        low = self._unbroadcasted_scale_tril
        k = self._event_shape[0]
        return (low @ low.transpose(-2, -1)).expand(*self._batch_shape, k, k)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        G = opcall.api
        k = self._event_shape[0]
        return G.linalg.inv(self.covariance_matrix).expand(*self._batch_shape, k, k)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        k = self._event_shape[0]
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(*self._batch_shape, k)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        G = opcall.api
        shape = self._extended_shape(sample_shape)
        eps = G.randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        k = self._event_shape[0]
        return -0.5 * (k * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self) -> Tensor:
        k = self._event_shape[0]
        h = 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(*self._batch_shape) if len(self._batch_shape) else h


__all__ = ["MultivariateNormal"]
