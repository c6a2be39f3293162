"""`G.nn.init`: in-place parameter initialisation, with PyTorch's formulas (kaiming, xavier, uniform ...).

Random numbers come from the runtime's generator (`Tensor.uniform_` / `normal_`), so `G.manual_seed`
fixes every initialisation, on CPU and CUDA alike. Every function writes under `no_grad` and returns
its argument.
"""

from __future__ import annotations

import math
from typing import Any

from runtime import opcall
from runtime.autograd.grad_mode import no_grad
from runtime.tensor import Tensor


def copy_into(dst: Tensor, src: Any) -> Tensor:
    """Write `src` (a Tensor, array or number, broadcast to dst's shape) into `dst` in place, untracked."""
    if not isinstance(src, Tensor):
        G = opcall.api
        src = G.tensor(src, dtype=dst.dtype, device=dst.device)
    with no_grad():
        return dst.copy_(src)


def zero_grad_in_place(p: Tensor) -> None:
    """Set p.grad to zeros in place, detached from any graph (zero_grad(set_to_none=False))."""
    grad = p.grad
    with no_grad():
        if grad.grad_fn is not None:
            grad = p.grad = grad.detach()
        grad.zero_()


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with samples of U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with samples of N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor: Tensor, val: float) -> Tensor:
    with no_grad():
        return tensor.fill_(val)


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
        if param is not None and (isinstance(param, bool) or not isinstance(param, (int, float))):
            raise ValueError(f"negative_slope {param} not a valid number")
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
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """U(-bound, bound), bound = gain * sqrt(3 / fan) (He et al., 2015)."""
    if 0 in tensor.shape:
        return tensor  # PyTorch warns and leaves an empty tensor alone
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / _fan(tensor, mode))
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """N(0, std^2), std = gain / sqrt(fan)."""
    if 0 in tensor.shape:
        return tensor
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode)), generator)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio, 2010)."""
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


_calculate_fan_in_and_fan_out = calculate_fan_in_and_fan_out  # the name programs reach for


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    return _fan(tensor, mode)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: Any = None) -> Tensor:
    """Samples of N(mean, std^2) conditioned on [a, b] (the truncated normal), by redrawing the entries that
    fall outside until none does; after 64 rounds (only when [a, b] lies far in a tail) the rest are clamped."""
    if not a < b:
        raise ValueError(f"trunc_normal_: expected a < b, got a={a}, b={b}")
    G = opcall.api
    with no_grad():
        tensor.normal_(mean, std, generator=generator)
        for _ in range(64):
            outside = (tensor < a) | (tensor > b)
            if not bool(outside.any()):
                return tensor
            fresh = G.empty_like(tensor).normal_(mean, std, generator=generator)
            tensor.copy_(G.where(outside, fresh, tensor))
        return tensor.clamp_(a, b)


def eye_(tensor: Tensor) -> Tensor:
    """The identity matrix (ones on the main diagonal) into a 2-D tensor."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    G = opcall.api
    with no_grad():
        return tensor.copy_(G.eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype, device=tensor.device))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """A 3-, 4- or 5-D convolution weight that passes channels through unchanged (per group): 1 at the centre
    of the kernel of output channel d and input channel d, 0 elsewhere."""
    if tensor.dim() not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    if tensor.shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = tensor.shape[0] // groups
    min_dim = min(per_group, tensor.shape[1])
    centre = tuple(s // 2 for s in tensor.shape[2:])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                tensor[(g * per_group + d, d, *centre)] = 1
    return tensor


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """A (semi-)orthogonal matrix (Saxe et al., 2013): the Q of a QR decomposition of a normal sample, its
    columns' signs fixed by R's diagonal so Q is uniformly distributed; the dims after 0 are flattened."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    G = opcall.api
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = G.empty(rows, cols, dtype=tensor.dtype, device=tensor.device).normal_(0, 1, generator=generator)
    if rows < cols:
        flat = flat.t()
    q, r = G.linalg.qr(flat)
    q = q * G.diagonal(r, 0).sign()
    if rows < cols:
        q = q.t()
    with no_grad():
        tensor.view(q.shape).copy_(q)
        tensor.mul_(gain)
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> Tensor:
    """A 2-D tensor of N(0, std^2) samples with ceil(sparsity * rows) zeros in each column, at random rows
    (Martens, 2010)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    G = opcall.api
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            zero_rows = G.randperm(rows, generator=generator)[:num_zeros] if generator is not None \
                else G.randperm(rows)[:num_zeros]
            tensor[zero_rows, col] = 0
    return tensor


def _deprecated(new: Any) -> Any:
    """The old name without the trailing underscore: warns and calls the in-place function, as PyTorch."""
    import warnings

    def old(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(f"`nn.init.{new.__name__[:-1]}` is now deprecated in favor of `nn.init.{new.__name__}`.",
                      FutureWarning, stacklevel=2)
        return new(*args, **kwargs)
    old.__name__ = new.__name__[:-1]
    old.__doc__ = f"Deprecated alias of {new.__name__}."
    return old


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
