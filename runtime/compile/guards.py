"""The Python state a compiled graph holds as constants, read at every call as part of its guards.

Note [Guards on Python state]
Capture records operators, so whatever Python value steered them is a constant of the graph: a module's
`training` flag (dropout, batch norm's statistics), a number or flag in a closure cell or a global the
function names, and which tensors it read without being given them (a parameter, a global tensor: the graph
holds that tensor object). A call whose state differs must not run that graph. `python_state(fn)` reads, at
every call, the values the function can reach that way. For each module it holds (the module itself, a
bound method's `self`, modules in its closure cells or among the globals its code names, and the modules
passed as arguments), every submodule's `training` flag and Python scalar attributes (`self.scale`), which
parameters and buffers it holds (a replaced `m.weight`, `bias = None`) with their requires_grad, shape and
dtype (`.data` assignment changes those), and which hooks it has. In its closure cells and named globals:
the Python scalars (None, bool, int, float, str, and short tuples and lists of them), the tensors (and
short lists, tuples and dicts of tensors) by identity, requires_grad, shape and dtype, and any other object
by identity (a rebound optimizer) and its own attributes one level down (the modules, scalars and tensors
of a trainer's `self`, `cfg.scale`), with the functions' default arguments, following the functions it
holds the same way one level down. The result joins the call's key, so a change compiles the new state
once and later calls with either state find theirs. What the code reads deeper (`cfg.optim.lr`, an
object with more than 64 attributes) is not seen: those stay constants of the graph, as the README says.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Iterator
from typing import Any

from runtime import opcall
from runtime.tensor import Tensor

_SCALARS = (type(None), bool, int, float, str)
_SHORT = 16  # longest tuple or list of scalars that is guarded (longer ones are data, not switches)


def python_state(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The guarded Python state of a call of `fn` (Note [Guards on Python state])."""
    module_type = _module_type()
    out: list[Any] = []
    modules: set[int] = set()
    held = list(_held(fn, 2, set()))
    n_held = len(held)
    for k, x in enumerate([*held, *args, *kwargs.values()]):
        if module_type is not None and isinstance(x, module_type):
            if id(x) not in modules:
                modules.add(id(x))
                out.append(_module_state(x))
        elif isinstance(x, _SCALARS):
            out.append(x)
        elif k < n_held and isinstance(x, Tensor):  # (the arguments' tensors are in the call's signature)
            out.append(_tensor_state(x))
        elif isinstance(x, tuple | list) and len(x) <= _SHORT and all(isinstance(a, _SCALARS) for a in x):
            out.append(tuple(x))
        elif k < n_held and isinstance(x, tuple | list | dict):
            items = x.values() if isinstance(x, dict) else x
            if len(x) <= _SHORT and all(isinstance(a, Tensor) for a in items):
                out.append(tuple(_tensor_state(a) for a in items))
        elif k < n_held:  # another object (an optimizer the graph steps): which one, and its own attributes
            out.append(id(x))
            out.extend(_attribute_state(x, module_type))
    return tuple(out)


_ATTRIBUTES = 64  # an object with more attributes is data, not configuration: only its identity is guarded


def _attribute_state(x: Any, module_type: type | None) -> Iterator[Any]:
    """An object's own attributes, one level (a trainer's `self.model`, `cfg.scale`): modules, Python scalars
    and tensors, as the function's own (Note [Guards on Python state])."""
    d = getattr(x, "__dict__", None)
    if type(d) is not dict or len(d) > _ATTRIBUTES:
        return
    for v in d.values():
        if module_type is not None and isinstance(v, module_type):
            yield _module_state(v)
        elif isinstance(v, _SCALARS):
            yield v
        elif isinstance(v, Tensor):
            yield _tensor_state(v)


def _tensor_state(t: Tensor) -> tuple[Any, ...]:
    """Which tensor the function reads, whether it requires grad, its shape and dtype (`.data` assignment
    changes those of the same tensor): Note [Guards on Python state]."""
    return (id(t), t._requires_grad, t._data.shape, t._dtype)


_HOOKS = ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks", "_backward_pre_hooks")


def _module_state(root: Any) -> tuple[Any, ...]:
    """Every submodule's `training` flag and Python scalars, which parameters and buffers it holds (None,
    or the tensor's `_tensor_state`) and which hooks, depth first (a plain walk: `modules()` costs ten
    times more)."""
    state: list[Any] = []
    stack = [root]
    while stack:
        m = stack.pop()
        d = m.__dict__
        state.append(d.get("training", True))
        state.extend(v for v in d.values() if isinstance(v, _SCALARS))
        for table in (d["_parameters"], d["_buffers"]):
            state.extend(None if t is None else _tensor_state(t) for t in table.values())
        for name in _HOOKS:  # hooks run while the function is captured: which ones is part of the graph
            hooks = d.get(name)
            if hooks:
                state.append((name, *map(id, hooks)))
        stack.extend(c for c in reversed(d["_modules"].values()) if c is not None)
    return tuple(state)


def _module_type() -> type | None:
    """nn.Module, if the program has modules (nn sits beside this package in the layers: it is reached
    through the installed API, and only when already imported)."""
    nn = getattr(opcall.api, "__dict__", {}).get("nn")
    return getattr(nn, "Module", None)


def _held(fn: Any, depth: int, seen: set[int]) -> Iterator[Any]:
    """What `fn` holds: itself if it is not a plain function, a bound method's `self`, its closure cells'
    contents and the globals its code names; functions among them are followed `depth - 1` levels."""
    if id(fn) in seen:
        return
    seen.add(id(fn))
    if isinstance(fn, types.MethodType):
        yield fn.__self__
        fn = fn.__func__
    if not isinstance(fn, types.FunctionType):
        if callable(fn):
            yield fn
        return
    for cell in fn.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        yield from _value(value, depth, seen)
    for value in (*(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values()):
        yield from _value(value, depth, seen)
    namespace = fn.__globals__
    for name in _names(fn.__code__):
        if name in namespace:
            yield from _value(namespace[name], depth, seen)


def _value(value: Any, depth: int, seen: set[int]) -> Iterator[Any]:
    if isinstance(value, types.FunctionType | types.MethodType):
        if depth > 1:
            yield from _held(value, depth - 1, seen)
    elif not isinstance(value, types.ModuleType | type):
        yield value


@functools.cache
def _names(code: types.CodeType) -> tuple[str, ...]:
    """The global names `code` and the functions written inside it read, each once."""
    names = dict.fromkeys(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):  # lambdas and inner functions
            names.update(dict.fromkeys(_names(const)))
    return tuple(names)
