"""Dropout layers beyond Dropout: Dropout1d/2d/3d (whole channels), AlphaDropout, FeatureAlphaDropout; active in
training mode only."""

from __future__ import annotations

import runtime.nn.functional as F
from runtime.nn.module import Module
from runtime.tensor import Tensor


class _DropoutNd(Module):
    fn = "dropout1d"

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self.fn)(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """In training, zero whole channels of a (N, C, L) or (C, L) input with probability p and scale the rest by 1 /
    (1 - p)."""
    fn = "dropout1d"


class Dropout2d(_DropoutNd):
    """In training, zero whole channels of a (N, C, H, W) or (C, H, W) input with probability p and scale the rest by
    1 / (1 - p)."""
    fn = "dropout2d"


class Dropout3d(_DropoutNd):
    """In training, zero whole channels of a (N, C, D, H, W) or (C, D, H, W) input with probability p and scale the
    rest by 1 / (1 - p)."""
    fn = "dropout3d"


class AlphaDropout(_DropoutNd):
    """In training, dropout that keeps SELU's self-normalising mean and variance: dropped elements get SELU's
    negative limit, then an affine correction."""
    fn = "alpha_dropout"


class FeatureAlphaDropout(_DropoutNd):
    """AlphaDropout of whole channels (N, C, *) rather than single elements."""
    fn = "feature_alpha_dropout"
