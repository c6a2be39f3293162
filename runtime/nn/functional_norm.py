"""Normalizations of torch.nn.functional built from the ops: instance_norm, local_response_norm, rms_norm."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import opcall
from runtime.autograd.grad_mode import no_grad
from runtime.nn.functional_pad import pad
from runtime.tensor import Tensor


def _G() -> Any:
    return opcall.api


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each (sample, channel) over its spatial dims; the running statistics, when given and
    use_input_stats, are updated with the batch average of the per-instance ones (unbiased variance)."""
    if input.dim() < 3:
        raise ValueError(f"instance_norm: expected an input of at least 3 dims (N, C, *), got {list(input.shape)}")
    spatial = list(range(2, input.dim()))
    count = int(np.prod(input.shape[2:]))
    if use_input_stats and count <= 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {list(input.shape)}")
    G = _G()
    channel = [1, -1] + [1] * len(spatial)
    if use_input_stats:
        mean = input.mean(spatial, keepdim=True)
        var = G.var(input, spatial, correction=0, keepdim=True)
        if running_mean is not None or running_var is not None:
            with no_grad():
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(mean.detach().mean(0).reshape([-1]) * momentum)
                if running_var is not None:
                    unbiased = var.detach() * (count / (count - 1))
                    running_var.mul_(1 - momentum).add_(unbiased.mean(0).reshape([-1]) * momentum)
    else:
        if running_mean is None or running_var is None:
            raise ValueError("instance_norm: Expected running_mean and running_var to be defined when "
                             "use_input_stats is false")
        mean, var = running_mean.reshape(channel), running_var.reshape(channel)
    out = (input - mean) * G.rsqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(channel)
    if bias is not None:
        out = out + bias.reshape(channel)
    return out


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """input / (k + alpha * mean of input^2 over `size` neighbouring channels) ** beta."""
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.dim()} dimensions)")
    if input.numel() == 0:
        return input.clone()
    squares = (input * input).movedim(1, -1)
    sums = pad(squares, [size // 2, (size - 1) // 2]).unfold(-1, size, 1).sum(-1).movedim(-1, 1)
    # PyTorch averages with an average pool: an integer input averages with truncating division
    window = sums / size if input.is_floating_point() else _G().div(sums, size, rounding_mode="trunc")
    return input / (window * alpha + k).pow(beta)


def rms_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """input / sqrt(mean(input^2 over the last len(normalized_shape) dims) + eps) * weight; eps defaults to the
    dtype's machine epsilon."""
    shape = [normalized_shape] if isinstance(normalized_shape, int) else [int(v) for v in normalized_shape]
    n = len(shape)
    if n == 0:
        raise RuntimeError("rms_norm: normalized_shape must have at least one dimension, got []")
    if list(input.shape[input.dim() - n:]) != shape or n > input.dim():
        raise RuntimeError(f"Given normalized_shape={shape}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    if weight is not None and list(weight.shape) != shape:
        raise RuntimeError(f"rms_norm: weight of shape {list(weight.shape)} does not match normalized_shape {shape}")
    G = _G()
    if eps is None:  # the dtype's machine epsilon (G.finfo: bfloat16 too, which NumPy lacks)
        eps = float(G.finfo(input.dtype).eps) if input.dtype.is_floating_point else 1e-6
    dims = list(range(input.dim() - n, input.dim()))
    out = input * G.rsqrt((input * input).mean(dims, keepdim=True) + eps)
    return out if weight is None else out * weight
