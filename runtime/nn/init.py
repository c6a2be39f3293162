"""`G.nn.init`: in-place parameter initialisation, with PyTorch's formulas (kaiming, xavier, uniform ...).

Random numbers come from the runtime's generator (`Tensor.uniform_` / `normal_`, seeded by
`G.manual_seed`) when the runtime has one; otherwise from a NumPy generator of this module, drawn
on the host and copied to the tensor's device. `manual_seed` below seeds both.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from runtime.autograd.grad_mode import no_grad
from runtime.tensor import Tensor

_rng = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    """Seed the initialisers (and the runtime's generator, `G.manual_seed`, when it exists)."""
    global _rng
    _rng = np.random.default_rng(seed)
    import generated as G
    if hasattr(G, "manual_seed"):
        G.manual_seed(seed)


def copy_into(dst: Tensor, src: Any) -> Tensor:
    """Write `src` (a Tensor, array or number, broadcast to dst's shape) into `dst` in place, untracked."""
    import generated as G
    if not isinstance(src, Tensor):
        src = G.tensor(np.asarray(src), dtype=dst.dtype, device=dst.device)
    with no_grad():
        if hasattr(dst, "copy_"):
            dst.copy_(src)
        else:  # until the runtime has copy_: write the array view, then bump the version like an op
            data = src._data
            if src.device != dst.device:
                data = G.tensor(src.numpy(force=True), dtype=dst.dtype, device=dst.device)._data
            dst._data[...] = data
            dst._bump_version()
    return dst


def zero_grad_in_place(p: Tensor) -> None:
    """Set p.grad to zeros, in place when the runtime has `zero_`, detached from any graph."""
    grad = p.grad
    with no_grad():
        if grad.grad_fn is not None:
            grad = p.grad = grad.detach()
        if hasattr(grad, "zero_"):
            grad.zero_()
        else:
            import generated as G
            p.grad = G.zeros_like(grad)


def _host_random(kind: str, shape: tuple[int, ...]) -> np.ndarray:
    return _rng.random(shape) if kind == "uniform" else _rng.standard_normal(shape)


def _random_like(kind: str, t: Tensor) -> Tensor:
    """U[0, 1) or N(0, 1) samples of t's shape, dtype and device."""
    import generated as G
    factory = getattr(G, "rand" if kind == "uniform" else "randn", None)
    if factory is not None:
        return factory(tuple(t.shape), dtype=t.dtype, device=t.device)
    return G.tensor(_host_random(kind, tuple(t.shape)), dtype=t.dtype, device=t.device)


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fill with samples of U(a, b)."""
    with no_grad():
        if hasattr(tensor, "uniform_"):
            return tensor.uniform_(a, b)
        return copy_into(tensor, _random_like("uniform", tensor).mul(b - a).add(a))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fill with samples of N(mean, std^2)."""
    with no_grad():
        if hasattr(tensor, "normal_"):
            return tensor.normal_(mean, std)
        return copy_into(tensor, _random_like("normal", tensor).mul(std).add(mean))


def constant_(tensor: Tensor, val: float) -> Tensor:
    return copy_into(tensor, np.full(tuple(tensor.shape), val))


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """PyTorch's recommended gain for a nonlinearity."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "sigmoid", "conv_transpose1d",
                        "conv_transpose2d", "conv_transpose3d"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"unsupported nonlinearity {nonlinearity!r}")


def calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight: dims 1 and 0 times the receptive field (the dims after 1)."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode {mode!r} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu") -> Tensor:
    """U(-bound, bound), bound = gain * sqrt(3 / fan) (He et al., 2015)."""
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / _fan(tensor, mode))
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu") -> Tensor:
    """N(0, std^2), std = gain / sqrt(fan)."""
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode)))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio, 2010)."""
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))
