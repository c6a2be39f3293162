"""The Python state a compiled graph holds as constants, read at every call as part of its guards.

Note [Guards on Python state]
Capture records operators, so whatever Python value steered them is a constant of the graph, and every
tensor the function reached through a name rather than an argument is an input the graph holds by
identity. A call whose state differs must not run that graph. `python_state(fn, args, kwargs)` reads, at
every call, what the function can reach that way, and the result joins the call's key, so a change
compiles the new state once and later calls with either state find theirs:
- what `fn` holds: itself if it is not a plain function, a bound method's `self`, its closure cells'
  contents and the globals its code names (functions among them followed the same way one level down);
  beside them, the arguments that are not tensors;
- of each value: a Python scalar (None, bool, int, float, str, and short tuples, lists and dicts of
  them) by value; a tensor, and a short tuple or list of tensors, by identity with its shape and dtype
  (a rebound global or cell holds another tensor, `t.data = u` gives it another shape; writes into the
  same tensor are read by the graph at run time);
- of an nn.Module, for it and every submodule: the scalars among its attributes (`training`, Dropout's
  `p`, a user's `self.scale`), each parameter and buffer as a held tensor (a replaced Parameter, a buffer
  rebound in `forward`), and the scalars of plain objects it holds (`self.cfg.scale`);
- of a plain object (a config instance, `SimpleNamespace`, an argparse `Namespace`, a dataclass; or a class
  written in the function's own module, for its class attributes): its scalar attributes, one level.
Objects of opgen's own classes other than modules (optimizers, schedulers, tensors' internals) are not
read: an optimizer's hyperparameters are inputs of a compiled step (Note [Capturing a training step]),
and their counters would compile again at every call. A tensor held by identity is kept alive by the graph
that holds it, so its id cannot be reused while the graph exists. What the code reaches through two
levels of plain objects (`cfg.model.scale`), or through a call's result, stays a constant of the graph, as
the README says.
"""

from __future__ import annotations

import functools
import types
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from runtime import opcall
from runtime.tensor import Tensor

_SCALARS = (type(None), bool, int, float, str)
_SHORT = 16  # longest tuple, list or dict that is guarded (longer ones are data, not switches)
_OWN = ("runtime", "generated")  # opgen's packages: their objects are not read as plain data


def python_state(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The guarded Python state of a call of `fn` (Note [Guards on Python state])."""
    module_type = _module_type()
    out: list[Any] = []
    seen: set[int] = set()
    for x in _held(fn, 2, set()):
        _read(x, module_type, out, seen, by_identity=True)
    for x in (*args, *kwargs.values()):
        if not isinstance(x, Tensor):  # tensor arguments are in the signature, by layout
            _read(x, module_type, out, seen, by_identity=False)
    return tuple(out)


def _read(x: Any, module_type: type | None, out: list[Any], seen: set[int], by_identity: bool) -> None:
    if isinstance(x, _SCALARS):
        out.append(x)
        return
    if id(x) in seen:
        return
    seen.add(id(x))
    if isinstance(x, Tensor):
        out.append(_identity(x))
    elif module_type is not None and isinstance(x, module_type):
        out.append(_module_state(x))
    elif isinstance(x, tuple | list | dict):
        short = _short(x, by_identity)
        if short is not None:
            out.append(short)
    elif isinstance(x, type):  # a class of the function's own module (see _value): its class attributes
        out.append(_attributes(vars(x)))
    elif _plain(type(x)) and isinstance(getattr(x, "__dict__", None), dict):
        out.append(_attributes(x.__dict__))


def _short(x: tuple[Any, ...] | list[Any] | dict[Any, Any], by_identity: bool) -> tuple[Any, ...] | None:
    """A short tuple or list of scalars (or of tensors, by identity where held by name), or a short dict of
    scalars, as a tuple; None for anything else."""
    if len(x) > _SHORT:
        return None
    if isinstance(x, dict):
        items = tuple(x.items())
        return items if all(isinstance(v, _SCALARS) for _, v in items) else None
    if all(isinstance(a, _SCALARS) for a in x):
        return tuple(x)
    if by_identity and all(isinstance(a, Tensor) for a in x):
        return tuple(map(_identity, x))
    return None


def _identity(t: Tensor | None) -> Any:
    """A tensor held by name: its identity, with its shape and dtype (`t.data = u` keeps the identity)."""
    return None if t is None else (id(t), t._data.shape, t._dtype)


def _attributes(d: dict[str, Any]) -> tuple[Any, ...]:
    """The scalars (and short tuples and lists of them) among an object's attributes, with their names."""
    out = []
    for name, v in d.items():
        if isinstance(v, _SCALARS):
            out.append((name, v))
        elif isinstance(v, tuple | list) and len(v) <= _SHORT and all(isinstance(a, _SCALARS) for a in v):
            out.append((name, tuple(v)))
    return tuple(out)


def _module_state(root: Any) -> tuple[Any, ...]:
    """Of the module and every submodule, depth first (a plain walk: `modules()` costs ten times more): its
    scalar attributes, its parameters and buffers as held tensors, and the scalars of plain objects it holds.
    Runs at every call: the common types are told apart by a dict lookup."""
    out: list[Any] = []
    append = out.append
    stack = [root]
    while stack:
        m = stack.pop()
        d = m.__dict__
        for v in d.values():
            kind = _KINDS.get(type(v))
            if kind is _SCALAR:
                append(v)
            elif kind is _SEQUENCE:  # scalars of exactly these types, read in C; not empty hook lists
                if v and len(v) <= _SHORT and _SCALAR_TYPES.issuperset(map(type, v)):
                    append(tuple(v))
            elif kind is None:
                if isinstance(v, _SCALARS):
                    append(v)
                elif _plain(type(v)) and isinstance(getattr(v, "__dict__", None), dict):
                    append(_attributes(v.__dict__))
        for t in d["_parameters"].values():
            append(None if t is None else (id(t), t._data.shape, t._dtype))
        for t in d["_buffers"].values():
            append(None if t is None else (id(t), t._data.shape, t._dtype))
        stack.extend(c for c in reversed(d["_modules"].values()) if c is not None)
    return tuple(out)


_SCALAR, _SEQUENCE, _SKIP = "scalar", "sequence", "skip"
_SCALAR_TYPES = frozenset(_SCALARS)
_KINDS: dict[type, str] = {**dict.fromkeys(_SCALARS, _SCALAR), tuple: _SEQUENCE, list: _SEQUENCE,
                           dict: _SKIP, OrderedDict: _SKIP}


@functools.cache
def _plain(cls: type) -> bool:
    """Instances of `cls` may be plain data: not a function, module, class or tensor, and no class of its MRO
    is opgen's own (a user's subclass of an optimizer is not plain data)."""
    if issubclass(cls, types.FunctionType | types.MethodType | types.ModuleType | type | Tensor | dict):
        return False
    return not any(c.__module__.split(".")[0] in _OWN for c in cls.__mro__)


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
        yield from _value(value, depth, seen, fn.__module__)
    namespace = fn.__globals__
    for name in _names(fn.__code__):
        if name in namespace:
            yield from _value(namespace[name], depth, seen, fn.__module__)


def _value(value: Any, depth: int, seen: set[int], home: str) -> Iterator[Any]:
    if isinstance(value, types.FunctionType | types.MethodType):
        if depth > 1:
            yield from _held(value, depth - 1, seen)
    elif isinstance(value, type):
        if value.__module__ == home:  # a class of the function's own module: its class attributes
            yield value
    elif not isinstance(value, types.ModuleType):
        yield value


@functools.cache
def _names(code: types.CodeType) -> tuple[str, ...]:
    """The global names `code` and the functions written inside it read, each once."""
    names = dict.fromkeys(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):  # lambdas and inner functions
            names.update(dict.fromkeys(_names(const)))
    return tuple(names)
