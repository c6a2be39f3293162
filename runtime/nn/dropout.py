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
    fn = "dropout1d"


class Dropout2d(_DropoutNd):
    fn = "dropout2d"


class Dropout3d(_DropoutNd):
    fn = "dropout3d"


class AlphaDropout(_DropoutNd):
    fn = "alpha_dropout"


class FeatureAlphaDropout(_DropoutNd):
    fn = "feature_alpha_dropout"
