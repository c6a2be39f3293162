"""F.linear_cross_entropy and LinearCrossEntropyOptions: cross entropy of linearly projected inputs.

`linear_cross_entropy(input, W, target)` is `cross_entropy(linear(input, W), target)` with W of shape
(C, d_1, ..., d_K, in_features) giving logits (N, C, d_1, ..., d_K) (a K-dimensional loss). PyTorch's
`options` select a chunked kernel that saves memory and gives the same values; opgen validates the options
and computes the loss the reference way (so the options change nothing here, as `options=None` in PyTorch).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Literal

from runtime import opcall
from runtime.tensor import Tensor

_ACC_POLICIES = {"auto", "accurate", "balanced", "compact"}


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """How PyTorch's chunked linear_cross_entropy splits its work (validated; the results are the reference
    computation's in opgen, module docstring)."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: Literal["accurate", "balanced", "compact", "auto"] = "auto"
    acc_dtype: Any = None

    def __post_init__(self) -> None:
        if self.acc_policy not in _ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None or (isinstance(self.batch_chunk_size, int)
                                                  and not isinstance(self.batch_chunk_size, bool)
                                                  and self.batch_chunk_size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {self.batch_chunk_size!r}")
        G = opcall.api
        if self.acc_dtype is not None and self.acc_dtype not in (G.float16, G.bfloat16, G.float32, G.float64):
            raise ValueError(f"acc_dtype must be one of None, float16, bfloat16, float32, float64, got "
                             f"{self.acc_dtype!r}")


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *, linear_bias: Tensor | None = None,
                         weight: Tensor | None = None, reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0,
                         options: LinearCrossEntropyOptions | None = None) -> Tensor:
    """`cross_entropy(logits, target, ...)` of logits `input @ linear_weight` (+ `linear_bias`); input (N, in)
    or (in,), linear_weight (C, *out_features, in). `ignore_index=None` means -100 for class indices and is
    required for class probabilities."""
    G = opcall.api
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if options is not None and not isinstance(options, LinearCrossEntropyOptions):
        raise TypeError(f"options must be a LinearCrossEntropyOptions or None, got {type(options).__name__}")
    if not 1 <= input.dim() <= 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batch = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions (in_features), got "
                           f"{in_features} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                           f"batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*batch, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    flat = linear_weight.reshape(num_classes * math.prod(out_features), in_features)
    logits = input.matmul(flat.transpose(0, 1)).reshape(logits_shape)
    if linear_bias is not None:
        logits = logits + linear_bias
    return G.cross_entropy_loss(logits, target, weight, reduction=reduction,
                                ignore_index=-100 if ignore_index is None else ignore_index,
                                label_smoothing=label_smoothing)
