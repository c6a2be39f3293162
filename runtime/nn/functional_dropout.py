"""The dropouts of torch.nn.functional beyond `dropout`: whole-channel (dropout1d/2d/3d), alpha dropout (which
keeps SELU's mean and variance) and its channel form. The keep masks come from `native_dropout` of a tensor of
ones, so they follow the generator state (`G.manual_seed`) as `dropout` does."""

from __future__ import annotations

import warnings
from typing import Any

from runtime import opcall
from runtime.tensor import Tensor

# Note [Channel dropout shapes]
# dropout1d takes (N, C, L) or (C, L) and refuses other ranks. dropout3d takes (N, C, D, H, W) or, unbatched,
# anything else (a batch of one is added, so the first dimension is the channel; other ranks warn).
# dropout2d keeps PyTorch's older rule: the mask spans the first two dimensions of whatever it gets, so a
# 3-D input is (N, C, L) (channel-wise 1-D dropout, with a warning), and ranks other than 3 and 4 warn.

# SELU's negative saturation value: -scale * alpha
_ALPHA_PRIME = -1.7580993408473766


def _G() -> Any:
    return opcall.api


def _check_p(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep(shape: list[int], p: float, like: Tensor) -> Tensor:
    """A 0/1 mask of `shape` keeping each entry with probability 1 - p."""
    G = _G()
    ones = G.ones(shape, dtype=like.dtype, device=like.device)
    return G.native_dropout(ones, p, True)[1].to(like.dtype)


def _channel_shape(x: Tensor) -> list[int]:
    """The mask shape of channel dropout: the first two sizes (batch, channel), 1 elsewhere."""
    return list(x.shape[:2]) + [1] * (x.dim() - 2)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool, nd: int) -> Tensor:
    """Zero whole channels: the mask has the input's first two sizes (batch, channel) and 1 elsewhere.
    Which dimensions those are follows PyTorch, compatibility quirks included (Note [Channel dropout
    shapes])."""
    name = f"dropout{nd}d"
    _check_p(p)
    dim = input.dim()
    if nd == 1 and dim not in (2, 3):
        raise RuntimeError(f"{name}: Expected 2D or 3D input, but received a {dim}D input")
    if nd > 1 and dim not in (nd + 1, nd + 2):
        warnings.warn(f"{name}: Received a {dim}-D input to {name}, which is deprecated; it is taken as "
                      f"PyTorch takes it (use dropout for elementwise dropout)", UserWarning, stacklevel=3)
    if nd == 2 and dim == 3:
        warnings.warn(f"{name}: Received a 3D input to {name}: taken as (N, C, L), channel-wise 1D dropout, as "
                      "PyTorch does (use dropout1d to say so)", UserWarning, stacklevel=3)
    batched = nd == 2 or dim == nd + 2
    x = input if batched else input.unsqueeze(0)
    if x.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        out = input * 0
    else:
        mask = _keep(_channel_shape(x), p, input) * (1.0 / (1.0 - p))
        out = x * mask if batched else (x * mask).squeeze(0)
    return input.copy_(out) if inplace else out


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) with probability p; scale the rest by 1/(1-p)."""
    return _feature_dropout(input, p, training, inplace, 1)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) or (C, H, W) with probability p; scale the rest by 1/(1-p)."""
    return _feature_dropout(input, p, training, inplace, 2)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) with probability p; scale the rest by 1/(1-p)."""
    return _feature_dropout(input, p, training, inplace, 3)


def _alpha(input: Tensor, p: float, training: bool, inplace: bool, mask_shape: list[int]) -> Tensor:
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        out = input * 0
    else:
        keep = _keep(mask_shape, p, input)
        a = ((1.0 - p) * (1.0 + p * _ALPHA_PRIME ** 2)) ** -0.5
        b = -a * _ALPHA_PRIME * p
        out = (input * keep + (1 - keep) * _ALPHA_PRIME) * a + b
    return input.copy_(out) if inplace else out


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Set elements to SELU's saturation value with probability p, then restore the mean and variance."""
    return _alpha(input, p, training, inplace, list(input.shape))


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """alpha_dropout of whole channels (dim 1)."""
    if training and input.dim() < 2:
        raise RuntimeError(f"feature_alpha_dropout: expected an input of at least 2 dims, got {input.dim()}")
    return _alpha(input, p, training, inplace, _channel_shape(input) if input.dim() >= 2 else [])
