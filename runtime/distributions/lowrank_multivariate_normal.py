"""LowRankMultivariateNormal(loc, cov_factor, cov_diag): covariance W W^T + diag(D)."""

from __future__ import annotations

from typing import Any

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.distribution import Distribution
from runtime.distributions.multivariate_normal import MultivariateNormal

Tensor = Any


class LowRankMultivariateNormal(Distribution):
    """A multivariate normal whose covariance is cov_factor @ cov_factor^T + diag(cov_diag). opgen forms the
    full covariance and its Cholesky factor (O(k^3); PyTorch uses the Woodbury identity); rsample is
    loc + W eps_W + sqrt(D) eps_D, as PyTorch's."""

    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, cov_factor: Tensor, cov_diag: Tensor, validate_args: bool | None = None) -> None:
        G = opcall.api
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        k = loc.shape[-1]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != (k,):
            raise ValueError(f"cov_factor must be a batch of matrices with shape {k} x m")
        if tuple(cov_diag.shape[-1:]) != (k,):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {(k,)}")
        batch = G.broadcast_shapes(tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]), tuple(cov_diag.shape[:-1]))
        self.loc = loc.expand(*batch, k)
        self.cov_factor = cov_factor.expand(*batch, *cov_factor.shape[-2:])
        self.cov_diag = cov_diag.expand(*batch, k)
        super().__init__(batch, (k,), validate_args=validate_args)
        cov = self.cov_factor @ self.cov_factor.transpose(-2, -1) + _diag_embed(self.cov_diag)
        self._mvn = MultivariateNormal(self.loc, covariance_matrix=cov, validate_args=False)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LowRankMultivariateNormal:
        k = self._event_shape[0]
        return LowRankMultivariateNormal(self.loc.expand(*batch_shape, k),
                                         self.cov_factor.expand(*batch_shape, *self.cov_factor.shape[-2:]),
                                         self.cov_diag.expand(*batch_shape, k), validate_args=False)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self.cov_factor.pow(2).sum(-1) + self.cov_diag

    @property
    def covariance_matrix(self) -> Tensor:
        return self._mvn.covariance_matrix

    @property
    def precision_matrix(self) -> Tensor:
        return self._mvn.precision_matrix

    @property
    def scale_tril(self) -> Tensor:
        return self._mvn.scale_tril

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        G = opcall.api
        shape = tuple(self._extended_shape(sample_shape))
        w_shape = shape[:-1] + tuple(self.cov_factor.shape[-1:])
        eps_w = G.randn(*w_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_d = G.randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self.cov_factor @ eps_w.unsqueeze(-1)).squeeze(-1) + self.cov_diag.sqrt() * eps_d

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._mvn.log_prob(value)

    def entropy(self) -> Tensor:
        return self._mvn.entropy()


def _diag_embed(v: Tensor) -> Tensor:
    G = opcall.api
    k = v.shape[-1]
    return v.unsqueeze(-1) * G.eye(k, dtype=v.dtype, device=v.device)


__all__ = ["LowRankMultivariateNormal"]
