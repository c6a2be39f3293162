"""`nn.Bilinear`: y = x1^T A x2 + b per output feature, A of shape (out_features, in1_features, in2_features)
and every parameter U(-1/sqrt(in1_features), 1/sqrt(in1_features)), as PyTorch's."""

from __future__ import annotations

import math
from typing import Any

from runtime import opcall
from runtime.amp import autocast_function
from runtime.nn.init import uniform_
from runtime.nn.module import Module
from runtime.nn.parameter import Parameter
from runtime.tensor import Tensor


@autocast_function("bilinear")
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]."""
    G = opcall.api
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} and "
                           f"{list(input2.shape[:-1])}")
    if weight.dim() != 3 or input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): weight of shape {list(weight.shape)} does not match inputs with "
                           f"{input1.shape[-1]} and {input2.shape[-1]} features")
    out = G.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out + bias if bias is not None else out


class Bilinear(Module):
    """y = x1^T W x2 + b per output feature: (*, in1_features), (*, in2_features) -> (*, out_features)."""
    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        G = opcall.api
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(G.empty(out_features, in1_features, in2_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(G.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw weight and bias uniform in +-1/sqrt(in1_features)."""
        bound = 1 / math.sqrt(self.weight.shape[1]) if self.weight.shape[1] else 0.0
        uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
