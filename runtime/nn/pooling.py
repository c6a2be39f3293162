"""Pooling layers in 1, 2 and 3 dims (max, average, power-average, adaptive, unpooling), holding their options
under PyTorch's names and calling the functions of runtime/nn/functional_pool.py."""

from __future__ import annotations

from typing import Any

import runtime.nn.functional as F
from runtime.nn.module import Module
from runtime.tensor import Tensor


def _ntuple(value: Any, n: int) -> tuple[int, ...]:
    return (value,) * n if isinstance(value, int) else tuple(value)


def _single(value: Any) -> tuple[int, ...]:
    return _ntuple(value, 1)


class _MaxPoolNd(Module):
    nd = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor) -> Any:
        fn = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[self.nd - 1]
        return fn(input, self.kernel_size, self.stride, self.padding, self.dilation, ceil_mode=self.ceil_mode,
                  return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Max over sliding windows of the last dim of a (N, C, L) or (C, L) input; return_indices also gives the argmax
    positions. stride defaults to kernel_size."""
    nd = 1


class MaxPool3d(_MaxPoolNd):
    """Max over sliding 3-D windows of a (N, C, D, H, W) or (C, D, H, W) input; return_indices also gives the argmax
    positions. stride defaults to kernel_size."""
    nd = 3


class AvgPool1d(Module):
    """Average over sliding windows of the last dim of a (N, C, L) or (C, L) input; count_include_pad counts the
    padding in the divisor. stride defaults to kernel_size."""
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding, self.ceil_mode, self.count_include_pad = _single(padding), ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(Module):
    """Average over sliding 3-D windows of a (N, C, D, H, W) or (C, D, H, W) input; divisor_override replaces the
    window size as divisor. stride defaults to kernel_size."""
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _LPPoolNd(Module):
    nd = 2

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        fn = (F.lp_pool1d, F.lp_pool2d, F.lp_pool3d)[self.nd - 1]
        return fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pool over windows of the last dim: (sum of x ** norm_type over the window) ** (1 / norm_type)."""
    nd = 1


class LPPool2d(_LPPoolNd):
    """Power-average pool over 2-D windows: (sum of x ** norm_type over the window) ** (1 / norm_type)."""
    nd = 2


class LPPool3d(_LPPoolNd):
    """Power-average pool over 3-D windows: (sum of x ** norm_type over the window) ** (1 / norm_type)."""
    nd = 3


class _AdaptiveMaxPoolNd(Module):
    nd = 2

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor) -> Any:
        fn = (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)[self.nd - 1]
        return fn(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pool of a (N, C, L) or (C, L) input into `output_size` near-equal windows; return_indices also gives the
    argmax positions."""
    nd = 1


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pool of a (N, C, H, W) or (C, H, W) input into an `output_size` grid of near-equal windows (None keeps
    that input size); return_indices also gives the argmax positions."""
    nd = 2


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pool of a (N, C, D, H, W) or (C, D, H, W) input into an `output_size` grid of near-equal windows (None
    keeps that input size); return_indices also gives the argmax positions."""
    nd = 3


class _AdaptiveAvgPoolNd(Module):
    nd = 1

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        fn = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[self.nd - 1]
        return fn(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pool of a (N, C, L) or (C, L) input into `output_size` near-equal windows."""
    nd = 1


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average pool of a (N, C, D, H, W) or (C, D, H, W) input into an `output_size` grid of near-equal windows (None
    keeps that input size)."""
    nd = 3


class _MaxUnpoolNd(Module):
    nd = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self.nd)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self.nd)
        self.padding = _ntuple(padding, self.nd)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        fn = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self.nd - 1]
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Undo MaxPool1d: forward(input, indices, output_size=None) puts each value at its index in a zero output."""
    nd = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """Undo MaxPool2d: forward(input, indices, output_size=None) puts each value at its index in a zero output."""
    nd = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """Undo MaxPool3d: forward(input, indices, output_size=None) puts each value at its index in a zero output."""
    nd = 3


class _FractionalMaxPoolNd(Module):
    nd = 2

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Tensor | None = None) -> None:
        super().__init__()
        if output_size is None and output_ratio is None:
            raise ValueError(f"FractionalMaxPool{self.nd}d requires specifying either an output size, or a pooling "
                             f"ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        ratios = [output_ratio] if isinstance(output_ratio, (int, float)) else list(output_ratio or [])
        if any(not 0 < r < 1 for r in ratios):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")
        self.kernel_size, self.output_size, self.output_ratio = kernel_size, output_size, output_ratio
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)

    def forward(self, input: Tensor) -> Any:
        fn = F.fractional_max_pool2d if self.nd == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                  _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Max over pseudo-random kernel_size windows of a (N, C, H, W) or (C, H, W) input, to output_size or to
    output_ratio (in (0, 1)) times the input size; give exactly one of the two."""
    nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Max over pseudo-random kernel_size windows of a (N, C, D, H, W) or (C, D, H, W) input, to output_size or to
    output_ratio (in (0, 1)) times the input size; give exactly one of the two."""
    nd = 3
