"""More activation layers (torch.nn's names, defaults and repr): LeakyReLU, ELU, SELU, Softplus, Hardtanh,
ReLU6, Mish, Hardswish, Hardsigmoid, LogSigmoid, Softsign, Tanhshrink, Threshold, GLU, Softmin, PReLU.
Each calls its generated op; `inplace=True` uses the op's in-place form."""

from __future__ import annotations

from typing import Any

import runtime.nn.functional as F
from runtime import opcall
from runtime.nn.module import Module
from runtime.nn.parameter import Parameter
from runtime.tensor import Tensor


def _G() -> Any:
    return opcall.api


class _Pointwise(Module):
    """A layer applying the op `fn` with the options in `_args` (attribute names, in the op's order)."""

    fn = ""
    _args: tuple[str, ...] = ()

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        args = [getattr(self, a) for a in self._args]
        if self.inplace:  # the op's in-place form, or F's write-back (Note [In-place activations])
            method = getattr(input, self.fn + "_", None)
            return method(*args) if method is not None else getattr(F, self.fn)(input, *args, inplace=True)
        return getattr(_G(), self.fn)(input, *args)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(_Pointwise):
    """Applies x where x > 0, negative_slope * x elsewhere."""
    fn, _args = "leaky_relu", ("negative_slope",)

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.negative_slope = negative_slope

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(_Pointwise):
    """Applies x where x > 0, alpha * (exp(x) - 1) elsewhere."""
    fn, _args = "elu", ("alpha",)

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.alpha = alpha

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class SELU(_Pointwise):
    """Applies the scaled ELU, scale * elu(x, alpha), with the self-normalizing constants."""
    fn = "selu"


class ReLU6(_Pointwise):
    """Applies min(max(x, 0), 6) elementwise."""
    fn = "relu6"


class Mish(_Pointwise):
    """Applies x * tanh(softplus(x)) elementwise."""
    fn = "mish"


class Hardswish(_Pointwise):
    """Applies x * relu6(x + 3) / 6 elementwise."""
    fn = "hardswish"


class Hardsigmoid(_Pointwise):
    """Applies relu6(x + 3) / 6 elementwise."""
    fn = "hardsigmoid"


class Hardtanh(_Pointwise):
    """Clamps x to [min_val, max_val] (default [-1, 1])."""
    fn, _args = "hardtanh", ("min_val", "max_val")

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__(inplace)
        if max_val <= min_val:
            raise ValueError("max_val must be greater than min_val")
        self.min_val, self.max_val = min_val, max_val

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class Softplus(_Pointwise):
    """Applies log(1 + exp(beta * x)) / beta, linear above `threshold`."""
    fn, _args = "softplus", ("beta", "threshold")

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__(False)
        self.beta, self.threshold = beta, threshold

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class LogSigmoid(_Pointwise):
    """Applies log(sigmoid(x)) elementwise, computed stably."""
    fn = "log_sigmoid"

    def __init__(self) -> None:
        super().__init__(False)


class Softsign(Module):
    """Applies x / (1 + abs(x)) elementwise."""
    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class Tanhshrink(Module):
    """Applies x - tanh(x) elementwise."""
    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input)


class Threshold(_Pointwise):
    """Replaces x by `value` where x <= threshold."""
    fn, _args = "threshold", ("threshold", "value")

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.threshold, self.value = threshold, value

    def forward(self, input: Tensor) -> Tensor:
        out = _G().threshold(input, self.threshold, self.value)
        return input.copy_(out) if self.inplace else out  # no threshold_ op: write the result back

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class GLU(Module):
    """Gated linear unit: splits dimension `dim` in halves a, b and returns a * sigmoid(b)."""
    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return _G().glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(Module):
    """Applies softmax(-x) along dimension `dim`."""
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    """max(0, x) + a * min(0, x) with a learnable slope `a` (one, or one per channel), initialised to `init`."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = Parameter(_G().full((num_parameters,), init, device=device, dtype=dtype))

    def forward(self, input: Tensor) -> Tensor:
        return _G().prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class CELU(Module):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)), computed as alpha * elu(x / alpha)."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if alpha == 0:
            raise ValueError("ZeroDivisionError: alpha cannot be 0 for CELU")
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        out = _G().elu(input / self.alpha) * self.alpha
        return input.copy_(out) if self.inplace else out

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Hardshrink(Module):
    """x where |x| > lambd, else 0."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        G = _G()
        return G.where(input.abs() > self.lambd, input, G.zeros_like(input))

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Module):
    """x - lambd above lambd, x + lambd below -lambd, 0 between: x - clamp(x, -lambd, lambd)."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        if lambd < 0:
            raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return input - _G().clamp(input, -self.lambd, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class RReLU(Module):
    """Randomised leaky ReLU (Xu et al., 2015): in training each negative element gets a slope drawn from
    U(lower, upper); in eval the slope is (lower + upper) / 2."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        if not 0 <= lower <= upper:
            raise ValueError(f"RReLU: expected 0 <= lower <= upper, got lower={lower}, upper={upper}")
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        G = _G()
        x = opcall.inplace_source(input) if self.inplace else input  # Note [In-place activations]
        if self.training:
            slope = G.empty_like(x).uniform_(self.lower, self.upper)
            out = G.where(x >= 0, x, x * slope)
        else:
            out = G.leaky_relu(x, (self.lower + self.upper) / 2)
        return input.copy_(out) if self.inplace else out

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class Softmax2d(Module):
    """Softmax over the channels of a (C, H, W) or (N, C, H, W) input."""

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return _G().softmax(input, -3)
