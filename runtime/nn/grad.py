"""The gradients of a convolution with respect to its input and its weight (torch.nn.grad).

`conv{1,2,3}d_input(input_size, weight, grad_output, ...)` is the gradient of
`conv{n}d(input, weight, ...)` with respect to an input of `input_size`, `conv{n}d_weight(input,
weight_size, grad_output, ...)` the gradient with respect to a weight of `weight_size`. A convolution is
linear in each argument, so each is the vector-Jacobian product at a zero argument, taken by the autograd
engine through the convolution itself (what its backward computes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runtime import opcall
from runtime.autograd.function import grad
from runtime.autograd.grad_mode import enable_grad
from runtime.tensor import Tensor


def _conv(nd: int) -> Any:
    from runtime.nn.functional import conv1d, conv2d, conv3d
    return (conv1d, conv2d, conv3d)[nd - 1]


def _vjp_input(nd: int, input_size: Sequence[int], weight: Tensor, grad_output: Tensor, stride: Any,
               padding: Any, dilation: Any, groups: int) -> Tensor:
    G = opcall.api
    x = G.zeros(tuple(input_size), dtype=grad_output.dtype, device=grad_output.device, requires_grad=True)
    with enable_grad():
        out = _conv(nd)(x, weight.detach(), None, stride, padding, dilation, groups)
        if tuple(out.shape) != tuple(grad_output.shape):
            raise RuntimeError(f"conv{nd}d_input: grad_output has shape {tuple(grad_output.shape)}, but the "
                               f"convolution of an input of size {tuple(input_size)} gives {tuple(out.shape)}")
        return grad(out, x, grad_output)[0]


def _vjp_weight(nd: int, input: Tensor, weight_size: Sequence[int], grad_output: Tensor, stride: Any,
                padding: Any, dilation: Any, groups: int) -> Tensor:
    G = opcall.api
    w = G.zeros(tuple(weight_size), dtype=grad_output.dtype, device=grad_output.device, requires_grad=True)
    with enable_grad():
        out = _conv(nd)(input.detach(), w, None, stride, padding, dilation, groups)
        if tuple(out.shape) != tuple(grad_output.shape):
            raise RuntimeError(f"conv{nd}d_weight: grad_output has shape {tuple(grad_output.shape)}, but the "
                               f"convolution with a weight of size {tuple(weight_size)} gives {tuple(out.shape)}")
        return grad(out, w, grad_output)[0]


def conv1d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1) -> Tensor:
    """The gradient of conv1d with respect to its input (of size `input_size`)."""
    return _vjp_input(1, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor, stride: Any = 1, padding: Any = 0,
                  dilation: Any = 1, groups: int = 1) -> Tensor:
    """The gradient of conv1d with respect to its weight (of size `weight_size`)."""
    return _vjp_weight(1, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1) -> Tensor:
    """The gradient of conv2d with respect to its input (of size `input_size`)."""
    return _vjp_input(2, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor, stride: Any = 1, padding: Any = 0,
                  dilation: Any = 1, groups: int = 1) -> Tensor:
    """The gradient of conv2d with respect to its weight (of size `weight_size`)."""
    return _vjp_weight(2, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1) -> Tensor:
    """The gradient of conv3d with respect to its input (of size `input_size`)."""
    return _vjp_input(3, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor, stride: Any = 1, padding: Any = 0,
                  dilation: Any = 1, groups: int = 1) -> Tensor:
    """The gradient of conv3d with respect to its weight (of size `weight_size`)."""
    return _vjp_weight(3, input, weight_size, grad_output, stride, padding, dilation, groups)


__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]
