"""Activations and small layers of torch.nn.functional that are compositions of ops: celu, hardshrink,
softshrink, rrelu, gumbel_softmax, channel_shuffle, bilinear; the in-place forms selu_/celu_/threshold_; and
torch.nn.functional's signatures of the activation ops that take `inplace=` (elu, selu, silu, mish,
hardsigmoid, hardswish, hardtanh, relu6, threshold).

Note [In-place activations]: `F.<act>(x, inplace=True)` runs the op's generated in-place form where it has
one (`elu_`, whose derivative is the op's own) and otherwise writes the functional result back with
`copy_`, computed from `opcall.inplace_source(x)` so that what the op saved for backward is not the tensor
the write-back changes."""

from __future__ import annotations

from typing import Any

from runtime import dtypes, opcall
from runtime.amp import autocast_function
from runtime.tensor import Tensor


def _G() -> Any:
    return opcall.api


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: celu's alpha must not be 0")
    G = _G()
    # the exponential sees only the non-positive part, so the unused branch can't overflow into a NaN gradient
    x = opcall.inplace_source(input) if inplace else input
    out = G.where(x > 0, x, G.expm1(x.clamp_max(0) / alpha) * alpha)
    return input.copy_(out) if inplace else out


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) written into input."""
    return celu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """In-place selu: selu(input) written into input, which is returned."""
    return input.copy_(_G().selu(opcall.inplace_source(input)))


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place threshold: x where x > threshold, else `value`, written into input."""
    return input.copy_(_G().threshold(opcall.inplace_source(input), threshold, value))


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, alpha * (exp(x) - 1) elsewhere; in place on input with `inplace=True`."""
    return _G().elu_(input, alpha) if inplace else _G().elu(input, alpha)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with SELU's fixed alpha and scale; in place on input with `inplace=True`."""
    return selu_(input) if inplace else _G().selu(input)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x); in place on input with `inplace=True`."""
    return _G().silu_(input) if inplace else _G().silu(input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x)); in place on input with `inplace=True`."""
    return _G().mish_(input) if inplace else _G().mish(input)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6; in place on input with `inplace=True`."""
    return _G().hardsigmoid_(input) if inplace else _G().hardsigmoid(input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6; in place on input with `inplace=True`."""
    return _G().hardswish_(input) if inplace else _G().hardswish(input)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """x clamped to [min_val, max_val]; in place on input with `inplace=True`."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _G().hardtanh_(input, min_val, max_val) if inplace else _G().hardtanh(input, min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6); in place on input with `inplace=True`."""
    return _G().hardtanh_(input, 0.0, 6.0) if inplace else _G().relu6(input)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else `value`; in place on input with `inplace=True`."""
    return threshold_(input, threshold, value) if inplace else _G().threshold(input, threshold, value)


@opcall.takes_out("hardshrink")
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0."""
    return _G().where((input > lambd) | (input < -lambd), input, 0)


@opcall.takes_out("softshrink")
def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    G = _G()
    return G.where(input > lambd, input - lambd, G.where(input < -lambd, input + lambd, 0))


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Leaky ReLU whose negative slope is drawn uniformly from [lower, upper] per element when training,
    (lower + upper) / 2 otherwise."""
    G = _G()
    x = opcall.inplace_source(input) if inplace else input
    if not training:
        out = G.leaky_relu(x, (lower + upper) / 2)
    else:
        slope = G.rand(list(x.shape), dtype=x.dtype, device=x.device) * (upper - lower) + lower
        out = G.where(x >= 0, x, x * slope)
    return input.copy_(out) if inplace else out.contiguous()  # PyTorch's rrelu result is row-major


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """In-place rrelu: leaky ReLU with a random negative slope in [lower, upper] when training, their mean otherwise."""
    return rrelu(input, lower, upper, training, inplace=True)


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """softmax((logits + Gumbel noise) / tau); `hard` returns the one-hot argmax with the soft sample's gradient."""
    G = _G()
    uniform = G.rand(list(logits.shape), dtype=logits.dtype, device=logits.device)
    gumbels = -G.log(-G.log(uniform.clamp_min(1e-20)).clamp_min(1e-20))
    soft = G.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return soft
    index = soft.argmax(dim, keepdim=True)
    one_hot = G.zeros_like(soft).scatter(dim, index, 1.0)
    return one_hot - soft.detach() + soft


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave the channels (dim 1) of `groups` groups: (N, g * k, *) -> channel order k-major."""
    if input.dim() < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    rest = list(input.shape[2:])
    x = input.reshape([n, groups, c // groups] + rest).transpose(1, 2)
    return x.reshape([n, c] + rest)


native_channel_shuffle = channel_shuffle


@autocast_function("bilinear")
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]."""
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D (out, in1, in2), got {list(weight.shape)}")
    out, in1, in2 = weight.shape
    if input1.shape[-1] != in1 or input2.shape[-1] != in2:
        raise RuntimeError(f"bilinear(): input sizes {list(input1.shape)} and {list(input2.shape)} don't match the "
                           f"weight {list(weight.shape)}")
    G = _G()
    mixed = G.matmul(input1, weight.permute([1, 0, 2]).reshape([in1, out * in2]))
    terms = mixed.reshape(list(mixed.shape[:-1]) + [out, in2]) * input2.unsqueeze(-2)
    # an integer bilinear keeps its dtype, wrapping, as PyTorch's (sum alone would widen to int64)
    y = terms.sum(-1, dtype=terms.dtype if terms.dtype.category == dtypes.INTEGRAL else None)
    return y if bias is None else y + bias
