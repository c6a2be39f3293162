"""Module hooks: forward pre-hooks, forward hooks and full backward hooks (torch.nn.Module's).

Note [Full backward hooks]
A full backward hook must see the gradients w.r.t. the module's inputs and outputs, computed from this
call of the module only. As PyTorch does, the call routes its tensor inputs and outputs through identity
nodes (`_BackwardHookNode`, one node per side with one output per tensor): the output-side node sees the
gradients w.r.t. the outputs and stores them; the input-side node sees all the gradients w.r.t. the inputs
at once, calls the hooks with both, and passes on their replacement if they return one. When no input
requires grad, the hooks run from the output-side node with grad_input all None.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from runtime.autograd.node import Node, RemovableHandle, collect_next_edges, set_history
from runtime.tensor import Tensor


def add_hook(hooks: list[Callable[..., Any]], hook: Callable[..., Any], prepend: bool,
             with_kwargs: bool) -> RemovableHandle:
    if not callable(hook):
        raise TypeError(f"hook must be callable, got {type(hook).__name__}")
    entry = _KwargsHook(hook) if with_kwargs else hook
    if prepend:
        hooks.insert(0, entry)
    else:
        hooks.append(entry)
    return RemovableHandle(hooks, entry)


class _KwargsHook:
    """A hook registered with with_kwargs=True: it also receives the keyword arguments."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn


class _BackwardHookNode(Node):
    """Identity over several tensors; `on_grads(grads)` sees them all and may return replacements."""

    def __init__(self, on_grads: Callable[[tuple[Any, ...]], Any]) -> None:
        super().__init__()
        self.on_grads = on_grads

    def name(self) -> str:
        return "BackwardHookFunctionBackward"

    def apply(self, grads: list[Any]) -> list[Any]:
        new = self.on_grads(tuple(grads))
        return list(grads if new is None else new)


def _route(values: tuple[Any, ...], on_grads: Callable[[tuple[Any, ...]], Any]) -> tuple[tuple[Any, ...], int]:
    """`values` with each tensor that requires grad replaced by an alias whose grad_fn is one identity node."""
    positions = [i for i, v in enumerate(values) if isinstance(v, Tensor) and v.requires_grad]
    if not positions:
        return values, 0
    node = _BackwardHookNode(on_grads)
    node.next_edges = collect_next_edges(*(values[i] for i in positions))
    aliases = tuple(values[i].detach() for i in positions)
    set_history(aliases, node)
    out = list(values)
    for i, alias in zip(positions, aliases, strict=True):
        out[i] = alias
    return tuple(out), len(positions)


def call_with_hooks(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    for hook in list(module._forward_pre_hooks):
        if isinstance(hook, _KwargsHook):
            result = hook.fn(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                       f"but got {result}.")
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    backward_hooks = module._backward_hooks
    pre_hooks = module.__dict__.get("_backward_pre_hooks", ())
    state: dict[str, Any] = {"n_inputs": 0}
    if backward_hooks:
        def on_input_grads(grad_input: tuple[Any, ...]) -> Any:
            return _run_backward_hooks(module, grad_input, state.get("grad_output", ()))
        args, state["n_inputs"] = _route(args, on_input_grads)
    output = module.forward(*args, **kwargs)
    for hook in list(module._forward_hooks):
        result = hook.fn(module, args, kwargs, output) if isinstance(hook, _KwargsHook) else hook(module, args, output)
        if result is not None:
            output = result
    if backward_hooks or pre_hooks:
        def on_output_grads(grad_output: tuple[Any, ...]) -> Any:
            replaced = _run_backward_pre_hooks(module, grad_output)
            if replaced is not None:
                grad_output = replaced
            state["grad_output"] = grad_output
            if backward_hooks and not state["n_inputs"]:
                import warnings
                warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                              "outputs since no inputs require gradients.", UserWarning, stacklevel=2)
                _run_backward_hooks(module, (None,) * max(1, len(args)), grad_output)
            return replaced
        if isinstance(output, Tensor):
            output = _route((output,), on_output_grads)[0][0]
        elif isinstance(output, tuple):
            output = _route(output, on_output_grads)[0]
    return output


def _run_backward_pre_hooks(module: Any, grad_output: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """`hook(module, grad_output)` for each full backward pre-hook; a non-None result replaces grad_output."""
    replaced = None
    for hook in list(module.__dict__.get("_backward_pre_hooks", ())):
        result = hook(module, grad_output if replaced is None else replaced)
        if result is not None:
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            if len(result) != len(grad_output):
                raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got {len(result)}, "
                                   f"but expected {len(grad_output)}")
            replaced = result
    return replaced


def _run_backward_hooks(module: Any, grad_input: tuple[Any, ...], grad_output: tuple[Any, ...]) -> Any:
    replaced = None
    for hook in list(module._backward_hooks):
        result = hook(module, grad_input if replaced is None else replaced, grad_output)
        if result is not None:
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            if len(result) != len(grad_input):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(result)}, but "
                                   f"expected {len(grad_input)}")
            replaced = result
    return replaced
