"""Helper functions that derivatives.yaml formulas may call.

Every public top-level function of this module is callable in a formula (codegen/derivatives.py reads
the names with `ast`; it never imports this file). The helpers are written with tensor methods and the
generated op API only, so a formula that uses them runs on every device through the dispatcher and is
itself differentiable (Note [create_graph runs formulas through the dispatcher], engine.py).

Shapes are tuples of ints; `dim` arguments follow PyTorch: an int, a list of ints, or None for "all".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

Tensor = Any  # the runtime Tensor (runtime/tensor.py); kept abstract so that this module imports nothing
Shape = tuple[int, ...]


def wrap_dim(dim: int, ndim: int) -> int:
    """A possibly negative dimension as a non-negative index (a 0-d tensor accepts 0 and -1)."""
    size = max(ndim, 1)
    if not -size <= dim < size:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-size}, {size - 1}], "
                         f"but got {dim})")
    return dim % size


def wrap_dims(dim: int | Sequence[int] | None, ndim: int) -> list[int]:
    """`dim` as a sorted list of non-negative dimensions; None or [] means every dimension."""
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return list(range(ndim))
    return sorted({wrap_dim(d, ndim) for d in dims})


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape)


def sum_to(grad: Tensor, shape: Sequence[int]) -> Tensor:
    """Reduce a gradient that was broadcast in the forward back to `shape` (sum over broadcast dims)."""
    shape = tuple(shape)
    gshape = tuple(grad.shape)
    if gshape == shape:
        return grad
    lead = len(gshape) - len(shape)
    if lead < 0:
        raise RuntimeError(f"sum_to: gradient of shape {list(gshape)} cannot be reduced to {list(shape)}")
    inner = [lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1]
    if inner:
        grad = grad.sum(inner, keepdim=True)
    if lead:
        grad = grad.sum(list(range(lead)))  # no keepdim: the leading dims go away, no reshape needed
    return grad


def expand_backward(grad: Tensor, shape: Sequence[int]) -> Tensor:
    """Gradient of `expand(self, size)`: sum over the expanded dimensions."""
    return sum_to(grad, shape)


def unsqueeze_multiple(t: Tensor, dims: int | Sequence[int] | None, ndim: int) -> Tensor:
    """Insert size-1 dimensions at `dims` (positions in a tensor of `ndim` dimensions)."""
    for d in wrap_dims(dims, ndim):
        t = t.unsqueeze(d)
    return t


def sum_backward(grad: Tensor, shape: Sequence[int], dim: int | Sequence[int] | None = None,
                 keepdim: bool = False) -> Tensor:
    """Gradient of `sum(self, dim, keepdim)`: put the reduced dims back, then expand to `shape`."""
    shape = tuple(shape)
    if not keepdim and len(shape) > 0:
        grad = unsqueeze_multiple(grad, dim, len(shape))
    return grad.expand(shape)


def mean_backward(grad: Tensor, shape: Sequence[int], dim: int | Sequence[int] | None = None,
                  keepdim: bool = False) -> Tensor:
    """Gradient of `mean(self, dim, keepdim)`."""
    shape = tuple(shape)
    count = numel(shape[d] for d in wrap_dims(dim, len(shape))) if shape else 1
    return sum_backward(grad, shape, dim, keepdim) / max(count, 1)


def maybe_multiply(t: Tensor, s: Any) -> Tensor:
    """`t * s`, skipping the multiplication when `s` is the number 1 (keeps the graph small)."""
    if isinstance(s, int | float) and not isinstance(s, bool) and s == 1:
        return t
    return t * s


def permute_backwards(grad: Tensor, dims: Sequence[int]) -> Tensor:
    """Gradient of `permute(self, dims)`: permute back with the inverse permutation."""
    ndim = len(dims)
    inverse = [0] * ndim
    for i, d in enumerate(dims):
        inverse[wrap_dim(d, ndim)] = i
    return grad.permute(inverse)


def restore_reduced_dims(grad: Tensor, dim: int | Sequence[int] | None, keepdim: bool, ndim: int) -> Tensor:
    """A reduced gradient with the reduced dims put back (size 1), ready to broadcast against the input."""
    if keepdim or ndim == 0:
        return grad
    return unsqueeze_multiple(grad, dim, ndim)


def reduce_like(grad: Tensor, like: Tensor) -> Tensor:
    """`sum_to(grad, like.shape)`: for formulas whose inputs broadcast."""
    return sum_to(grad, tuple(like.shape))


# -- helpers of the operator library (runtime/kernels/*: pointwise, reductions, nn, indexing) ---------

def _ops() -> Any:
    import generated
    return generated


def zeros_like_grad(grad: Tensor) -> Tensor:
    """A zero gradient shaped like `grad` (for ops that are piecewise constant: floor, sign ...)."""
    return _ops().zeros_like(grad)


def clamp_max_mask(min: Tensor, max: Tensor | None) -> Tensor:  # noqa: A002
    """Where `min` (not `max`) decides clamp's value: everywhere, or where min <= max."""
    return min == min if max is None else min <= max


def clamp_backward(grad: Tensor, self: Tensor, min: Any, max: Any) -> Tensor:  # noqa: A002
    """Gradient of clamp for `self`: passes where min <= self <= max."""
    G = _ops()
    mask = None
    if min is not None:
        mask = self >= min
    if max is not None:
        upper = self <= max
        mask = upper if mask is None else G.logical_and(mask, upper)
    return grad if mask is None else G.where(mask, grad, 0)


def mish_backward(grad: Tensor, self: Tensor) -> Tensor:
    """d/dx x*tanh(softplus(x)) = tanh(sp) + x*sigmoid(x)*(1 - tanh(sp)^2)."""
    G = _ops()
    t = G.tanh(G.softplus(self))
    return grad * (t + self * G.sigmoid(self) * (1 - t * t))
