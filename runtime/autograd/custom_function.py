"""User-defined differentiable operations: `G.autograd.Function` (torch.autograd.Function).

Note [Custom Function nodes]
`MyFn.apply(*args)` runs `MyFn.forward` with grad mode off, then, when grad mode is on and a tensor argument
requires grad, makes the floating-point outputs (those not marked non-differentiable) outputs of one backward
node. That node is also the `ctx` the user's forward (or `setup_context`) wrote to, as in PyTorch, where
`y.grad_fn` is the ctx: an instance of `MyFnBackward`, a class made once per Function subclass. Its edges
are those of the tensor arguments, in argument order; `backward` returns one gradient per argument of
forward, and the node keeps the ones of the tensor arguments. Tensors given to `save_for_backward` become
SavedVariables when forward returns (outputs saved without their grad_fn: Note [Saved tensors and reference
cycles], node.py), so the version check and saved-tensor hooks apply to them as to any node's. An input
returned as it is (not marked dirty) comes back as a new tensor sharing its storage, so that the input's
own history is not replaced; an input marked dirty (modified in place by forward) gets the new history
itself, after PyTorch's checks for in-place changes of leaves.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import runtime.autograd.anomaly_mode as anomaly_mode
from runtime.autograd.grad_mode import is_grad_enabled, no_grad
from runtime.autograd.node import Node, collect_next_edges, record_output
from runtime.autograd.saved import SavedVariable
from runtime.tensor import Tensor


class FunctionCtx:
    """What forward, setup_context and backward see as `ctx` (Note [Custom Function nodes])."""

    needs_input_grad: tuple[bool, ...] = ()

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep these tensors (or None) for backward, as `ctx.saved_tensors`."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {tensors.index(t)} "
                                f"is of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        self._saved_for_forward = tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Declare the inputs that forward modified in place (they are returned as outputs)."""
        self._dirty = {id(t) for t in tensors}

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Declare outputs that get no gradient (they do not require grad)."""
        self._non_differentiable = {id(t) for t in tensors}

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward gets zeros (True, the default) or None for outputs that got no gradient."""
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        saved = getattr(self, "_saved_variables", None)
        if saved is None:
            to_save = getattr(self, "_to_save", None)
            return tuple(to_save) if to_save is not None else ()
        node = self if isinstance(self, Node) else None
        return tuple(s.unpack(node) for s in saved)

    saved_variables = saved_tensors


class BackwardCFunction(FunctionCtx, Node):
    """The backward node of one call of a custom Function (Note [Custom Function nodes])."""

    _forward_cls: Any = None
    _saved_fields = ("_saved_variables",)
    materialize_grads = True

    def __init__(self) -> None:
        Node.__init__(self)
        self._tensor_positions: tuple[int, ...] = ()
        self._n_args = 0

    def name(self) -> str:
        return type(self).__name__

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        cls = self._forward_cls
        result = cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) < self._n_args:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients (expected "
                               f"{self._n_args}, got {len(result)})")
        if any(g is not None for g in result[self._n_args:]):
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients (expected "
                               f"{self._n_args}, got {len(result)})")
        positions = set(self._tensor_positions)
        for i, g in enumerate(result[:self._n_args]):
            if g is not None and i not in positions:
                raise RuntimeError(f"function {self.name()} returned a gradient different than None at position "
                                   f"{i + 1}, but the corresponding forward input was not a Variable")
        out: list[Tensor | None] = []
        for edge, i in zip(self.next_edges, self._tensor_positions, strict=True):
            out.append(result[i] if edge is not None else None)
        return out


class _FunctionMeta(type):
    """Makes `<Name>Backward`, the node class of each Function subclass."""

    def __init__(cls, name: str, bases: tuple[type, ...], attrs: dict[str, Any]) -> None:
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=_FunctionMeta):
    """Base class of differentiable operations with user-written forward and backward.

    Write `forward(ctx, *args)` (or `forward(*args)` with `setup_context(ctx, inputs, output)`) and
    `backward(ctx, *grad_outputs)` as static methods, and call `MyFn.apply(*args)`."""

    generate_vmap_rule = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method.")

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError("opgen has no forward-mode AD: jvp is not supported")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run forward; record the backward node when an argument requires grad (Note [Custom Function
        nodes])."""
        ctx = cls._backward_cls()
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        ctx._tensor_positions = positions
        ctx._n_args = len(args)
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        record = is_grad_enabled() and any(ctx.needs_input_grad)
        custom_setup = cls.setup_context is not Function.setup_context
        with no_grad():
            if custom_setup:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        if not record:
            _release_to_save(ctx)
            return outputs
        return _record(ctx, args, outputs)


def _release_to_save(ctx: BackwardCFunction) -> None:
    ctx.__dict__.pop("_to_save", None)


def _record(ctx: BackwardCFunction, args: tuple[Any, ...], outputs: Any) -> Any:
    single = not isinstance(outputs, tuple)
    outs = [outputs] if single else list(outputs)
    ctx.next_edges = collect_next_edges(*(args[i] for i in ctx._tensor_positions))
    inputs = {id(args[i]): args[i] for i in ctx._tensor_positions}
    dirty = ctx.__dict__.get("_dirty", set())
    non_diff = ctx.__dict__.get("_non_differentiable", set())
    meta: list[Any] = []
    for nr, t in enumerate(outs):
        if not isinstance(t, Tensor):
            meta.append(None)
            continue
        if id(t) in inputs and id(t) in dirty:
            _check_dirty(t)
            if t._base is not None:
                raise NotImplementedError("opgen's custom Functions cannot mark a view dirty (its base's history "
                                          "would need rebasing): modify the base tensor instead")
        elif id(t) in inputs:
            t = outs[nr] = t.detach()  # an input returned as it is: a new tensor on its storage
        if id(outputs if single else outputs[nr]) in non_diff or not t._dtype.is_floating_point:
            t._requires_grad = False
            meta.append(None)
            continue
        record_output(t, ctx, nr)
        meta.append((tuple(t.shape), t._dtype, t._device))
    ctx.num_inputs = len(outs)
    ctx.output_meta = tuple(meta)
    if anomaly_mode.enabled:
        ctx._forward_trace = anomaly_mode.forward_trace()
    to_save = ctx.__dict__.pop("_to_save", None)
    if to_save is not None:
        out_ids = {id(o) for o in outs if isinstance(o, Tensor)} | {id(o) for o in
                                                                 ([outputs] if single else outputs)}
        ctx._saved_variables = [SavedVariable(_current(t, outs, outputs, single), id(t) in out_ids)
                                for t in to_save]
    return outs[0] if single else tuple(outs)


def _current(t: Tensor | None, outs: list[Any], outputs: Any, single: bool) -> Tensor | None:
    """The tensor to save for `t`: the recorded output where forward returned `t` itself."""
    originals = [outputs] if single else list(outputs)
    for o, new in zip(originals, outs, strict=True):
        if o is t:
            return new  # type: ignore[no-any-return]
    return t


def _check_dirty(t: Tensor) -> None:
    if t._requires_grad and t._grad_fn is None and t._base is None:
        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator for a backward that is not itself differentiable: it runs with grad mode off."""
    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            return fn(ctx, *args)
    return wrapper


class InplaceFunction(Function):
    """A Function with an `inplace` flag (PyTorch's legacy helper class)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    """PyTorch's legacy base of functions over nested inputs and outputs (`forward_extended`,
    `backward_extended` on an instance). Legacy instance-called functions are gone from PyTorch (calling
    one fails in PyTorch 2.13), so here too the class exists for its name and subclasses, and calling an
    instance raises; write a Function with static `forward`/`backward` and `apply` instead."""

    def forward_extended(self, *input: Any) -> Any:
        raise NotImplementedError

    def backward_extended(self, *grad_output: Any) -> Any:
        raise NotImplementedError


__all__ = ["BackwardCFunction", "Function", "FunctionCtx", "InplaceFunction", "NestedIOFunction",
           "once_differentiable"]
