"""Correlation matrices through their Cholesky factors: CorrCholeskyTransform (unconstrained vectors to
lower Cholesky factors of correlation matrices) and LKJCholesky (the LKJ distribution over such factors)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import runtime.distributions.constraints as constraints
from runtime import opcall
from runtime.distributions.beta import Beta
from runtime.distributions.distribution import Distribution
from runtime.distributions.special import lgamma
from runtime.distributions.transform_base import Transform
from runtime.distributions.utils import broadcast_all

Tensor = Any


def _strict_lower_positions(n: int, diag: int = -1) -> np.ndarray:
    """Flat positions (row-major) of the entries below diagonal `diag` of an n x n matrix, row by row."""
    rows, cols = np.tril_indices(n, k=diag)
    return rows * n + cols


def vec_to_tril_matrix(vec: Tensor, diag: int = -1) -> Tensor:
    """The n x n matrix with `vec` (..., m) filled row by row below diagonal `diag`, zeros elsewhere."""
    G = opcall.api
    m = vec.shape[-1]
    n = round((2 * m + 0.25 - diag * (diag + 1)) ** 0.5 - 0.5 - diag)  # m = n(n-1)/2 for diag=-1
    positions = _strict_lower_positions(n, diag)
    if len(positions) != m:
        raise ValueError(f"a vector of {m} elements is no lower triangle below diagonal {diag}")
    source = np.full(n * n, m, dtype=np.int64)
    source[positions] = np.arange(m)
    padded = G.cat([vec, G.zeros(*vec.shape[:-1], 1, dtype=vec.dtype, device=vec.device)], -1)
    index = G.tensor(source, device=vec.device)
    return padded.index_select(-1, index).reshape(*vec.shape[:-1], n, n)


def tril_matrix_to_vec(mat: Tensor, diag: int = -1) -> Tensor:
    """The entries of `mat` below diagonal `diag`, row by row."""
    G = opcall.api
    n = mat.shape[-1]
    index = G.tensor(_strict_lower_positions(n, diag), device=mat.device)
    return mat.reshape(*mat.shape[:-2], n * n).index_select(-1, index)


def _pad_left_one(x: Tensor) -> Tensor:
    G = opcall.api
    return G.cat([G.ones(*x.shape[:-1], 1, dtype=x.dtype, device=x.device), x], -1)


class CorrCholeskyTransform(Transform):
    """Maps a vector of D(D-1)/2 reals to the lower Cholesky factor of a D x D correlation matrix: tanh to
    (-1, 1), then each row is built by stick-breaking so it has unit norm and a positive diagonal."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CorrCholeskyTransform)

    def __hash__(self) -> int:
        return hash(type(self))

    def _call(self, x: Tensor) -> Tensor:
        G = opcall.api
        eps = G.finfo(x.dtype).eps
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        remaining = (1 - r.pow(2)).sqrt().cumprod(-1)
        eye = G.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return (r + eye) * _pad_left_one(remaining[..., :-1])

    def _inverse(self, y: Tensor) -> Tensor:
        left = 1 - (y * y).cumsum(-1)
        left_shifted = _pad_left_one(left[..., :-1])
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left_shifted, diag=-1).sqrt()
        return (t.log1p() - (-t).log1p()) / 2

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        G = opcall.api
        left = 1 - (y * y).cumsum(-1)
        stick = 0.5 * tril_matrix_to_vec(left, diag=-2).log().sum(-1)
        tanh_part = -2 * (x + G.softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick + tanh_part

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)


def mvlgamma(a: Tensor, p: int) -> Tensor:
    """The log of the multivariate gamma function of dimension p."""
    out = a * 0 + p * (p - 1) / 4 * math.log(math.pi)
    for j in range(1, p + 1):
        out = out + lgamma(a + (1 - j) / 2)
    return out


class LKJCholesky(Distribution):
    """The LKJ distribution over lower Cholesky factors of dim x dim correlation matrices: the density of
    the correlation matrix is proportional to det^(concentration - 1). Samples by the onion method (Beta
    radii, directions uniform on spheres); no rsample."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Any = 1.0, validate_args: bool | None = None) -> None:
        G = opcall.api
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = tuple(self.concentration.shape)
        marginal = self.concentration + 0.5 * (dim - 2)
        offset = G.tensor([0.0] + list(range(dim - 1)), dtype=self.concentration.dtype,
                          device=self.concentration.device)
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, (dim, dim), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        return LKJCholesky(self.dim, self.concentration.expand(batch_shape),
                           validate_args=self.__dict__.get("_validate_args"))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        G = opcall.api
        with G.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = self._extended_shape(sample_shape)
            normal = G.randn(*shape, dtype=y.dtype, device=y.device).tril(-1)
            norms = normal.pow(2).sum(-1, keepdim=True).sqrt()
            sphere = G.where(norms > 0, normal / norms.clamp(min=G.finfo(y.dtype).tiny), G.zeros_like(normal))
            w = y.sqrt() * sphere
            diag = (1 - w.pow(2).sum(-1)).clamp(min=G.finfo(y.dtype).tiny).sqrt()
            return w + G.diag_embed(diag)

    def log_prob(self, value: Tensor) -> Tensor:
        G = opcall.api
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = G.arange(2, self.dim + 1, dtype=value.dtype, device=value.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize = 0.5 * dm1 * math.log(math.pi) + mvlgamma(alpha - 0.5, dm1) - lgamma(alpha) * dm1
        return unnormalized - normalize


__all__ = ["CorrCholeskyTransform", "LKJCholesky", "tril_matrix_to_vec", "vec_to_tril_matrix"]
