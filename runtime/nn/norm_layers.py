"""Normalization layers beyond batch, layer and group norm: InstanceNorm1d/2d/3d, LocalResponseNorm, RMSNorm
(PyTorch's parameters, buffers and defaults)."""

from __future__ import annotations

from typing import Any

import runtime.nn.functional as F
from runtime import opcall
from runtime.autograd.grad_mode import no_grad
from runtime.nn.module import Module
from runtime.nn.parameter import Parameter
from runtime.tensor import Tensor


def _G() -> Any:
    return opcall.api


class _InstanceNorm(Module):
    nd = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        G = _G()
        self.bias_enabled = bias
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(G.ones(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(G.zeros(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", G.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", G.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", G.tensor(0, dtype=G.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        """Set running_mean to 0, running_var to 1 and num_batches_tracked to 0 (when tracked)."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset the running statistics, and weight to 1 and bias to 0 when affine."""
        self.reset_running_stats()
        if self.affine:
            with no_grad():
                self.weight.fill_(1)
                if self.bias is not None:
                    self.bias.zero_()

    def forward(self, input: Tensor) -> Tensor:
        n = self.nd
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")
        unbatched = input.dim() == n + 1
        x = input.unsqueeze(0) if unbatched else input
        if x.shape[1] != self.num_features and self.affine:
            raise ValueError(f"expected input's size at dim=1 to match num_features ({self.num_features}), but got: "
                             f"{x.shape[1]}.")
        use_input_stats = self.training or not self.track_running_stats
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
        momentum = self.momentum if self.momentum is not None else 0.1
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias, use_input_stats,
                              momentum, self.eps)
        return out.squeeze(0) if unbatched else out

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.affine and self.bias_enabled}, track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """Normalise each channel of each sample of a (N, C, L) or (C, L) input over L; `affine` adds a per-channel
    weight and bias, track_running_stats keeps running statistics for eval."""
    nd = 1


class InstanceNorm2d(_InstanceNorm):
    """Normalise each channel of each sample of a (N, C, H, W) or (C, H, W) input over (H, W); `affine` adds a
    per-channel weight and bias, track_running_stats keeps running statistics for eval."""
    nd = 2


class InstanceNorm3d(_InstanceNorm):
    """Normalise each channel of each sample of a (N, C, D, H, W) or (C, D, H, W) input over (D, H, W); `affine` adds
    a per-channel weight and bias, track_running_stats keeps running statistics for eval."""
    nd = 3


class LocalResponseNorm(Module):
    """input / (k + alpha * mean of input^2 over `size` neighbouring channels) ** beta, for (N, C, *) inputs."""
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class RMSNorm(Module):
    """input / sqrt(mean(input^2 over the normalized_shape dims) + eps) * weight; eps None is the dtype's epsilon."""
    def __init__(self, normalized_shape: int | tuple[int, ...] | list[int], eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_G().ones(list(shape), device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        """Set the weight (when elementwise_affine) back to ones."""
        if self.weight is not None:
            with no_grad():
                self.weight.fill_(1)

    def forward(self, input: Tensor) -> Tensor:
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class CrossMapLRN2d(Module):
    """PyTorch's legacy cross-channel local response normalisation of a 4-D input: input * scale**-beta with
    scale_c = k + alpha/size * (sum of squares over channel c's window). The windows are those of the legacy
    kernel PyTorch keeps, a running sum that adds channel c + p - 1 and drops channel c - p (p = (size-1)//2
    + 1) but never drops channel 0; reproduced as is, gradients by autograd through this forward."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        G = _G()
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        channels = input.shape[1]
        square = input * input
        pre_pad = int((self.size - 1) / 2 + 1)
        first = square[:, :min(pre_pad, channels)].sum(1)
        scales = [first]
        for c in range(1, channels):
            current = scales[-1]
            if c < channels - pre_pad + 1:
                current = current + square[:, c + pre_pad - 1]
            if c > pre_pad:
                current = current - square[:, c - pre_pad]
            scales.append(current)
        scale = G.stack(scales, 1) * (self.alpha / self.size) + self.k
        return input * scale.pow(-self.beta)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
