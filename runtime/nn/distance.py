"""CosineSimilarity and PairwiseDistance layers."""

from __future__ import annotations

import runtime.nn.functional as F
from runtime.nn.module import Module
from runtime.tensor import Tensor


class CosineSimilarity(Module):
    """Cosine of the angle between x1 and x2 along `dim` (eps keeps the denominator away from zero)."""
    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """p-norm distance between x1 and x2 along the last dim (eps added to the difference; keepdim keeps that dim)."""
    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
