"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d, with PyTorch's constructor signatures,
parameter names and shapes (weight (out, in // groups, *k), transposed (in, out // groups, *k); bias (out,)),
initialisation and `padding_mode` ('zeros', 'reflect', 'replicate', 'circular')."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import runtime.nn.functional as F
import runtime.nn.init as init
from runtime.factories import empty
from runtime.nn.module import Module
from runtime.nn.parameter import Parameter
from runtime.tensor import Tensor

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value: Any, n: int) -> tuple[int, ...]:
    if isinstance(value, int):
        return (value,) * n
    out = tuple(int(v) for v in value)
    return out * n if len(out) == 1 else out


class _ConvNd(Module):
    nd = 2
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 output_padding: Any = 0, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got padding_mode="
                             f"'{padding_mode}'")
        n = self.nd
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride = _ntuple(kernel_size, n), _ntuple(stride, n)
        self.dilation, self.output_padding = _ntuple(dilation, n), _ntuple(output_padding, n)
        self.padding_mode = padding_mode
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding: Any = padding
            totals = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size, strict=True)]
            pads: list[int] = []
            for total in reversed(totals):
                left = total // 2 if padding == "same" else 0
                pads += [left, (total - left) if padding == "same" else 0]
            self._reversed_padding_repeated_twice = pads
        else:
            self.padding = _ntuple(padding, n)
            self._reversed_padding_repeated_twice = [p for p in reversed(self.padding) for _ in range(2)]
        if self.transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(empty(*shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weight Kaiming-uniform (a=sqrt(5)) and the bias uniform in +-1/sqrt(fan_in)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init.calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self.nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self.nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self.nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, 0, device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        conv = (F.conv1d, F.conv2d, F.conv3d)[self.nd - 1]
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over (N, C, L) or (C, L)."""

    nd = 1


class Conv2d(_Conv):
    """2-D convolution over (N, C, H, W) or (C, H, W)."""

    nd = 2


class Conv3d(_Conv):
    """3-D convolution over (N, C, D, H, W) or (C, D, H, W)."""

    nd = 3


class _ConvTranspose(_ConvNd):
    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__}: padding must be numbers, not {padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, output_padding, device, dtype)

    def _output_padding(self, input: Tensor, output_size: Sequence[int] | None) -> tuple[int, ...]:
        if output_size is None:
            return self.output_padding
        n = self.nd
        size = [int(v) for v in output_size][-n:]
        if len(size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} or "
                             f"{n + 2} elements (got {len(list(output_size))})")
        result = []
        for i in range(n):
            smallest = ((input.shape[input.dim() - n + i] - 1) * self.stride[i] - 2 * self.padding[i]
                        + self.dilation[i] * (self.kernel_size[i] - 1) + 1)
            if not smallest <= size[i] < smallest + self.stride[i]:
                raise ValueError(f"requested an output size of {size}, but valid sizes range from {smallest} to "
                                 f"{smallest + self.stride[i] - 1} (for an input of {list(input.shape[2:])})")
            result.append(size[i] - smallest)
        return tuple(result)

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self.nd - 1]
        return fn(input, self.weight, self.bias, self.stride, self.padding, self._output_padding(input, output_size),
                  self.groups, self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """Transposed 1-D convolution (the input-gradient of Conv1d) over (N, C_in, L); forward's output_size picks among
    the valid output lengths."""
    nd = 1


class ConvTranspose2d(_ConvTranspose):
    """Transposed 2-D convolution (the input-gradient of Conv2d) over (N, C_in, H, W); forward's output_size picks
    among the valid output sizes."""
    nd = 2


class ConvTranspose3d(_ConvTranspose):
    """Transposed 3-D convolution (the input-gradient of Conv3d) over (N, C_in, D, H, W); forward's output_size picks
    among the valid output sizes."""
    nd = 3
