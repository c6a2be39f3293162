"""Transforms (torch.distributions.transforms): invertible maps with log |det J|, for TransformedDistribution.

The classes live in transform_base.py (Transform, inverses, ComposeTransform), elementwise_transforms.py
and structured_transforms.py; this module gathers them under PyTorch's module path."""

from runtime.distributions.elementwise_transforms import (
    AbsTransform,
    AffineTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StickBreakingTransform,
    TanhTransform,
)
from runtime.distributions.structured_transforms import (
    CatTransform,
    CumulativeDistributionTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    ReshapeTransform,
    StackTransform,
)
from runtime.distributions.transform_base import ComposeTransform, Transform, identity_transform

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CumulativeDistributionTransform",
           "ExpTransform", "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
           "StackTransform", "StickBreakingTransform", "TanhTransform", "Transform", "identity_transform"]

from runtime.distributions.correlation import CorrCholeskyTransform

__all__ += ["CorrCholeskyTransform"]
