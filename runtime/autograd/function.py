"""The user surface of the engine: Tensor.backward and G.autograd.backward / G.autograd.grad."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import opcall
from runtime.autograd.custom_function import (  # noqa: F401 (torch.autograd.function's names)
    BackwardCFunction,
    Function,
    FunctionCtx,
    InplaceFunction,
    NestedIOFunction,
    once_differentiable,
)
from runtime.autograd.engine import run_backward
from runtime.tensor import Tensor, install_methods

Tensors = Tensor | Sequence[Tensor]


def _as_tuple(x: Any) -> tuple[Any, ...]:
    if x is None:
        return ()
    return tuple(x) if isinstance(x, list | tuple) else (x,)


def _ones_like(t: Tensor) -> Tensor:
    """The implicit root gradient; a direct NumPy fill on CPU (this runs once per backward())."""
    data = getattr(t, "_data", None)
    if type(data) is np.ndarray:
        return Tensor._wrap(np.ones(data.shape, dtype=data.dtype), t._dtype)
    G = opcall.api
    return G.ones_like(t)


def _make_grads(outputs: tuple[Tensor, ...], grads: tuple[Tensor | None, ...]) -> list[Tensor]:
    """The root gradients: the given ones, or ones for scalar outputs."""
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad can be given for each output: got {len(grads)} gradients for "
                           f"{len(outputs)} outputs")
    out = []
    for t, g in zip(outputs, grads, strict=True):
        if g is None:
            if not t._requires_grad:
                out.append(None)  # run_backward reports the output that does not require grad
                continue
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t.is_floating_point():
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                   f"{t.dtype!r}")
            g = _ones_like(t)
        out.append(g)
    return out


def backward(tensors: Tensors, grad_tensors: Tensors | None = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Tensors | None = None) -> None:
    """Accumulate the gradients of `tensors` (w.r.t. every leaf, or only `inputs`) into `.grad`."""
    outputs = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(outputs)
    inputs_t = _as_tuple(inputs) if inputs is not None else None
    if inputs_t is not None and not inputs_t:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    for i, t in enumerate(outputs):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    run_backward(outputs, _make_grads(outputs, grads), retain_graph, create_graph, inputs_t,
                 allow_unused=True, accumulate=True)


def grad(outputs: Tensors, inputs: Tensors, grad_outputs: Tensors | None = None,
         retain_graph: bool | None = None, create_graph: bool = False,
         allow_unused: bool = False) -> tuple[Tensor | None, ...]:
    """The gradients of `outputs` w.r.t. `inputs`, returned (not accumulated into `.grad`)."""
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if not ins:
        raise RuntimeError("grad requires at least one input")
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outs)
    for i, t in enumerate(outs):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    result = run_backward(outs, _make_grads(outs, grads), retain_graph, create_graph, ins,
                          allow_unused=allow_unused, accumulate=False)
    return result if result is not None else ()


def _tensor_backward(self: Tensor, gradient: Tensor | None = None, retain_graph: bool | None = None,
                     create_graph: bool = False, inputs: Tensors | None = None) -> None:
    """Tensor.backward: `backward(self, gradient, ...)`."""
    backward(self, gradient, retain_graph, create_graph, inputs)


# Note [Tensor methods from upper layers] (runtime/tensor.py)
install_methods(backward=_tensor_backward)
