"""Activations that PyTorch writes as compositions of other ops (CompositeImplicitAutograd).

The elementwise activations (leaky_relu, elu, silu, mish, softplus, hardtanh ...) are pointwise
entries of native_functions.yaml; only the compositions live here.
"""

from __future__ import annotations

import math
from typing import Any

from runtime import opcall

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _G() -> Any:
    return opcall.api


def relu6(self: Any) -> Any:
    return _G().hardtanh(self, 0, 6)


def selu(self: Any) -> Any:
    return _G().elu(self, _SELU_ALPHA, _SELU_SCALE)


def gelu(self: Any, approximate: str = "none") -> Any:
    """x * Phi(x), exactly with erf, or with the tanh approximation."""
    G = _G()
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"GeluKernelImpl\" not implemented for '{self.dtype.name}'")
    if approximate == "none":
        return self * 0.5 * (G.erf(self * math.sqrt(0.5)) + 1)
    if approximate == "tanh":
        inner = (self + self * self * self * 0.044715) * math.sqrt(2 / math.pi)
        return self * 0.5 * (G.tanh(inner) + 1)
    raise RuntimeError(f"approximate argument must be either none or tanh, got '{approximate}'")


def prelu(self: Any, weight: Any) -> Any:
    """max(0, x) + weight * min(0, x); a 1-D weight of C values applies along dim 1."""
    G = _G()
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    n = weight.numel()
    w = weight
    if n != 1:
        if self.dim() < 2 or self.shape[1] != n:
            channels = self.shape[1] if self.dim() >= 2 else 1
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers "
                               f"= {n} and channel size = {channels}.")
        w = G.reshape(weight, (n,) + (1,) * (self.dim() - 2))
    elif weight.dim() == 1:
        w = G.reshape(weight, ())
    return G.where(self > 0, self, w * self)
