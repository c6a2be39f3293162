"""`nn.utils.fusion`: fold an eval-mode BatchNorm into the convolution or linear layer before it (torch's).

With s = bn.weight / sqrt(running_var + eps) per channel, the fused layer has weight W * s (along the output
channels: dim 0, or dim 1 of a transposed convolution's weight) and bias (b - running_mean) * s + bn.bias,
so fused(x) == bn(layer(x)) in eval mode. The `_eval` helpers return a fused deep copy of the layer.
"""

from __future__ import annotations

import copy

from runtime import opcall
from runtime.nn.module import Module
from runtime.nn.parameter import Parameter
from runtime.tensor import Tensor


def _check_eval(*modules: Module) -> None:
    if any(m.training for m in modules):
        raise RuntimeError("Fusion only for eval!")


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                         bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    G = opcall.api
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    conv_b = G.zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = G.ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = G.zeros_like(bn_rm) if bn_b is None else bn_b
    rsqrt = G.rsqrt(bn_rv + bn_eps)
    shape = [1, -1] + [1] * (conv_w.dim() - 2) if transpose else [-1, 1] + [1] * (conv_w.dim() - 2)
    fused_w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(dtype=weight_dtype)
    fused_b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(dtype=bias_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_conv_bn_eval(conv: Module, bn: Module, transpose: bool = False) -> Module:
    _check_eval(conv, bn)
    if bn.running_mean is None or bn.running_var is None:
        raise RuntimeError("fuse_conv_bn_eval needs a BatchNorm that tracks running statistics")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                           bn_w: Tensor, bn_b: Tensor) -> tuple[Parameter, Parameter]:
    G = opcall.api
    linear_b = G.zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * G.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * scale.unsqueeze(-1)
    fused_b = (linear_b - bn_rm) * scale + bn_b
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)


def fuse_linear_bn_eval(linear: Module, bn: Module) -> Module:
    _check_eval(linear, bn)
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError("To fuse, linear.out_features must equal bn.num_features or bn.num_features must "
                             "equal 1")
    if bn.running_mean is None or bn.running_var is None:
        raise RuntimeError("fuse_linear_bn_eval needs a BatchNorm that tracks running statistics")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused




__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]
