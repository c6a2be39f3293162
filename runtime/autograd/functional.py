"""`G.autograd.functional`: jacobian, hessian, vjp, jvp, vhp and hvp of a function of tensors.

As torch.autograd.functional: `inputs` is a Tensor or a tuple of Tensors and results mirror that
structure (and the structure of `func`'s outputs); results are detached unless `create_graph=True`;
an output that does not depend on an input gets zeros, or a RuntimeError with `strict=True`.
jvp and hvp use the double-backward trick (the vjp of a vjp), so they need the formulas of
derivatives.yaml to be differentiable, as `create_graph=True` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from runtime import opcall
from runtime.autograd.function import grad as _grad
from runtime.autograd.grad_mode import enable_grad
from runtime.tensor import Tensor

Inputs = Tensor | tuple[Tensor, ...]


def _G() -> Any:
    return opcall.api


def _as_tuple(x: Any, arg: str, fn: str) -> tuple[bool, tuple[Tensor, ...]]:
    is_tuple = isinstance(x, (tuple, list))
    items = tuple(x) if is_tuple else (x,)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            where = f"{arg}" if not is_tuple else f"{arg} at index {i}"
            raise TypeError(f"The {where} given to {fn} must be either a Tensor or a tuple of Tensors but the "
                            f"value at index {i} has type {type(t).__name__}.")
    return is_tuple, items


def _prepare(inputs: tuple[Tensor, ...], create_graph: bool) -> tuple[Tensor, ...]:
    """Inputs that require grad: views of the originals when the result must stay in their graph."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(True)
                 for t in inputs)


def _finish(values: Any, create_graph: bool) -> Any:
    if isinstance(values, tuple):
        return tuple(_finish(v, create_graph) for v in values)
    return values if create_graph or values is None else values.detach()


def _unwrap(is_tuple: bool, values: tuple[Any, ...]) -> Any:
    return values if is_tuple else values[0]


def _autograd_grad(outputs: tuple[Tensor, ...], inputs: tuple[Tensor, ...], grad_outputs: tuple[Tensor, ...],
                   create_graph: bool, strict: bool, what: str) -> tuple[Tensor, ...]:
    """d(sum <outputs, grad_outputs>)/d inputs, with zeros (or strict's error) for unused inputs."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs, strict=True) if o.requires_grad]
    if pairs:
        got = _grad(tuple(o for o, _ in pairs), inputs, tuple(g for _, g in pairs), retain_graph=True,
                    create_graph=create_graph, allow_unused=True)
    else:
        got = (None,) * len(inputs)
    out = []
    for i, (g, t) in enumerate(zip(got, inputs, strict=True)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                                   f"This is not allowed in strict mode{what}.")
            g = _G().zeros_like(t)
        out.append(g)
    return tuple(out)


def _call(func: Callable[..., Any], inputs: tuple[Tensor, ...], fn: str) -> tuple[bool, tuple[Tensor, ...]]:
    return _as_tuple(func(*inputs), "outputs of the user-provided function", fn)


def _check_v(v: tuple[Tensor, ...], like: tuple[Tensor, ...], fn: str, arg: str) -> None:
    if len(v) != len(like):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got {len(v)}.")
    for i, (a, b) in enumerate(zip(v, like, strict=True)):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(f"Mismatch in shape: {arg} has size {list(b.shape)} but v has size "
                               f"{list(a.shape)} at index {i} ({fn}).")


def _default_v(outputs: tuple[Tensor, ...], fn: str) -> tuple[Tensor, ...]:
    if len(outputs) != 1 or outputs[0].numel() != 1:
        raise RuntimeError(f"The vector v can only be None if the user-provided function returns a single "
                           f"Tensor with a single element ({fn}).")
    return (_G().ones_like(outputs[0]),)


def vjp(func: Callable[..., Any], inputs: Inputs, v: Inputs | None = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), v^T J): the vector-Jacobian product at `inputs`."""
    with enable_grad():
        in_tuple, ins = _as_tuple(inputs, "inputs", "vjp")
        ins = _prepare(ins, create_graph)
        out_tuple, outs = _call(func, ins, "vjp")
        if v is None:
            vs = _default_v(outs, "vjp")
        else:
            vs = _as_tuple(v, "v", "vjp")[1]
            _check_v(vs, outs, "vjp", "the output of the user-provided function")
        res = _autograd_grad(outs, ins, vs, create_graph, strict, "")
    return _finish(_unwrap(out_tuple, outs), create_graph), _finish(_unwrap(in_tuple, res), create_graph)


def jvp(func: Callable[..., Any], inputs: Inputs, v: Inputs | None = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), J v): the Jacobian-vector product at `inputs` (the vjp of a vjp)."""
    G = _G()
    with enable_grad():
        in_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
        ins = _prepare(ins, create_graph)
        if v is None:
            if len(ins) != 1 or ins[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                                   "single Tensor with a single element.")
            vs: tuple[Tensor, ...] = (G.ones_like(ins[0]),)
        else:
            vs = _as_tuple(v, "v", "jvp")[1]
            _check_v(vs, ins, "jvp", "inputs")
        out_tuple, outs = _call(func, ins, "jvp")
        us = tuple(G.zeros_like(o).requires_grad_(True) for o in outs)
        g = _autograd_grad(outs, ins, us, True, strict, "")
        res = _autograd_grad(g, us, vs, create_graph, strict, " (jvp)")
    return _finish(_unwrap(out_tuple, outs), create_graph), _finish(_unwrap(out_tuple, res), create_graph)


def jacobian(func: Callable[..., Any], inputs: Inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """d func / d inputs: for output i and input j a tensor of shape out_i.shape + in_j.shape.

    One backward pass per output element (reverse mode); `vectorize` and `strategy` are accepted and
    computed the same way.
    """
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    G = _G()
    with enable_grad():
        in_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
        ins = _prepare(ins, create_graph)
        out_tuple, outs = _call(func, ins, "jacobian")
        blocks: list[tuple[Tensor, ...]] = []
        for out in outs:
            flat = G.reshape(out, (-1,))
            rows: list[list[Tensor]] = [[] for _ in ins]
            for k in range(flat.numel()):
                onehot = G.zeros_like(flat)
                onehot[k] = 1.0
                gs = _autograd_grad((flat,), ins, (onehot,), create_graph, strict, "")
                for j, g in enumerate(gs):
                    rows[j].append(G.reshape(g, (-1,)))
            per_input = []
            for j, inp in enumerate(ins):
                mat = G.stack(rows[j], 0) if rows[j] else G.zeros((0, inp.numel()), dtype=inp.dtype,
                                                                   device=inp.device)
                per_input.append(G.reshape(mat, (*out.shape, *inp.shape)))
            blocks.append(tuple(per_input))
    result = tuple(_finish(b, create_graph) for b in blocks)
    if not out_tuple:
        return _unwrap(in_tuple, result[0])
    return tuple(_unwrap(in_tuple, b) for b in result)


def hessian(func: Callable[..., Any], inputs: Inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The second derivatives of a function with one single-element output: for inputs i and j a tensor of
    shape in_i.shape + in_j.shape."""
    in_tuple, ins = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*xs: Tensor) -> tuple[Tensor, ...]:
        out_tuple, outs = _call(func, xs, "hessian")
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor with a single "
                               "element.")
        return _autograd_grad(outs, xs, (_G().ones_like(outs[0]),), True, strict, "")

    result = jacobian(gradient, ins, create_graph=create_graph, strict=strict)
    return result if in_tuple else result[0][0]


def vhp(func: Callable[..., Any], inputs: Inputs, v: Inputs | None = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), v^T H) for a function with one single-element output."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func: Callable[..., Any], inputs: Inputs, v: Inputs | None = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), H v) for a function with one single-element output (H v = (v^T H)^T for a symmetric H)."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func: Callable[..., Any], inputs: Inputs, v: Inputs | None, create_graph: bool,
                     strict: bool, fn: str) -> tuple[Any, Any]:
    G = _G()
    with enable_grad():
        in_tuple, ins = _as_tuple(inputs, "inputs", fn)
        ins = _prepare(ins, create_graph)
        if v is None:
            if len(ins) != 1 or ins[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                                   "single Tensor with a single element.")
            vs: tuple[Tensor, ...] = (G.ones_like(ins[0]),)
        else:
            vs = _as_tuple(v, "v", fn)[1]
            _check_v(vs, ins, fn, "inputs")
        _, outs = _call(func, ins, fn)
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError(f"The function given to {fn} should return a single Tensor with a single element.")
        g = _autograd_grad(outs, ins, (G.ones_like(outs[0]),), True, strict, "")
        res = _autograd_grad(g, ins, vs, create_graph, strict, " (double backward)")
    return _finish(outs[0], create_graph), _finish(_unwrap(in_tuple, res), create_graph)


__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]
