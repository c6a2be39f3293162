"""The Python state a compiled graph holds as constants, read at every call as part of its guards.

Note [Guards on Python state]
Capture records operators, so whatever Python value steered them is a constant of the graph, and every
tensor the function reached through a name rather than an argument is an input the graph holds by
identity. A call whose state differs must not run that graph. `python_state(fn, args, kwargs)` reads, at
every call, what the function can reach that way, and the result joins the call's key, so a change
compiles the new state once and later calls with either state find theirs:
- where it looks: what `fn` holds (itself if it is not a plain function, a bound method's `self`), its
  closure cells, its default arguments and the globals its code loads; functions among them are followed
  the same way one level down, and their code object is part of the state (a helper rebound to another
  function); beside them, the arguments that are not tensors;
- a Python scalar (None, bool, int, float, str; and short tuples, lists and dicts of them) by value;
- a tensor (and a short tuple, list or dict of tensors) by identity, with its requires_grad, shape and
  dtype (a rebound global or cell holds another tensor; `t.data = u` gives the same one another shape;
  writes into the same tensor are read by the graph at run time);
- an nn.Module, for it and every submodule: its class, its scalar attributes (`training`, Dropout's `p`, a
  user's `self.scale`, a conv's `stride`), its parameters and buffers as tensors (a replaced Parameter, a
  buffer rebound in `forward`), which hooks it has, and the scalars of plain objects it holds
  (`self.cfg.scale`);
- any other object the function holds: its identity (a rebound optimizer), and its own attributes one level
  down (a trainer's `self.model`, `cfg.scale`, an argparse `Namespace`): modules, scalars and tensors as
  above; as an argument, only the attributes (its identity is in the call's signature). A class written in
  the function's own module is read for its class attributes (`Config.lr`).
What the code reads deeper (`cfg.optim.lr`, an object of more than 64 attributes) stays a constant of the
graph, as the README says. A tensor held by identity is kept alive by the graph that reads it, an object
by the key itself, so an id cannot be reused while the graph exists.

Where to look is found once per function, in a `StatePlan`: its closure cells (the cell objects, which a
function keeps for life), its globals dict and the names its code (and the code of lambdas and functions
written inside it) loads as globals (LOAD_GLOBAL; attribute names are not looked up). A call reads only
what the plan names: each cell's contents and each name in the globals dict now, so a cell rebound, a
global rebound or defined later, a function replaced by another in a cell or global (whose own plan is
then made, once, and kept), a module's `training` flag flipped, or a submodule added, replaced or removed
is seen at the very next call; nothing read is cached. A function whose `__code__` is replaced gets a new
plan. How a value is classified (module, tensor, scalar, sequence, other) is kept per class, and the walk
over a module's attributes tells the common types apart by a dict lookup.
"""

from __future__ import annotations

import dis
import functools
import types
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from runtime import opcall
from runtime.tensor import Tensor

_SCALARS = (type(None), bool, int, float, str)
_SCALAR_TYPES = frozenset(_SCALARS)
_SHORT = 16  # longest tuple, list or dict that is guarded (longer ones are data, not switches)
_ATTRIBUTES = 64  # an object with more attributes is data, not configuration: only its identity is guarded
_SKIP, _MODULE, _SCALAR, _SEQUENCE, _DICT, _TENSOR, _CLASS, _OBJECT = range(8)
_FUNCTIONS = (types.FunctionType, types.MethodType)
_HOOKS = ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks", "_backward_pre_hooks")


def python_state(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The guarded Python state of a call of `fn` (Note [Guards on Python state])."""
    return StatePlan(fn).state(args, kwargs)


class StatePlan:
    """Where the guarded Python state of `fn` is read (Note [Guards on Python state]); `state(args,
    kwargs)` reads it for one call."""

    __slots__ = ("fn", "plan")

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.plan = _Plan(fn)

    def state(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        plan = self.plan
        if plan.code is not None and plan.code is not plan.function.__code__:  # the function's code replaced
            plan = self.plan = _Plan(self.fn)
        held: list[Any] = []
        plan.read(2, {id(self.fn)}, held)
        out: list[Any] = []
        seen: set[int] = set()
        for x in held:
            _read(x, True, plan.home, out, seen)
        for x in args:
            _read(x, False, plan.home, out, seen)
        if kwargs:
            for x in kwargs.values():
                _read(x, False, plan.home, out, seen)
        return tuple(out)


def _read(x: Any, held: bool, home: str | None, out: list[Any], seen: set[int]) -> None:
    """Append the guarded state of `x` to `out` (`held`: reached through a name, not passed as an argument)."""
    kind = _KINDS.get(x.__class__)
    if kind is None:
        kind = _kind(x.__class__)
    if kind == _SCALAR:
        out.append(x)
        return
    if kind == _SKIP or id(x) in seen:
        return
    seen.add(id(x))
    if kind == _MODULE:
        out.append(_module_state(x))
    elif kind == _TENSOR:
        if held:  # (the arguments' tensors are in the call's signature)
            out.append(_tensor_state(x))
    elif kind == _SEQUENCE or kind == _DICT:
        short = _short(x, held)
        if short is not None:
            out.append(short)
    elif kind == _CLASS:
        if held and x.__module__ == home:  # a class written beside the function: its class attributes
            out.append(_attributes(vars(x)))
    else:
        d = getattr(x, "__dict__", None)
        if held:
            out.append(_Identity(x))
        if type(d) is dict and len(d) <= _ATTRIBUTES:
            out.append(_attributes(d))


class _Identity:
    """An object in a call's key by identity (it may define `__eq__` or be unhashable, as a dataclass); the
    key keeps it alive, so its id is not reused while the key exists."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Identity) and other.obj is self.obj


def _short(x: Any, held: bool) -> tuple[Any, ...] | None:
    """A short tuple, list or dict of scalars, or (held by name) of tensors, as a tuple; else None."""
    if len(x) > _SHORT:
        return None
    if isinstance(x, dict):
        keys, values = tuple(x), tuple(x.values())
    else:
        keys, values = (), tuple(x)
    if all(isinstance(a, _SCALARS) for a in values):
        return (*keys, *values)
    if held and all(isinstance(a, Tensor) for a in values):
        return (*keys, *map(_tensor_state, values))
    return None


def _tensor_state(t: Tensor | None) -> Any:
    """Which tensor the function reads, whether it requires grad, its shape and dtype (`.data` assignment
    changes those of the same tensor): Note [Guards on Python state]."""
    return None if t is None else (id(t), t._requires_grad, t._data.shape, t._dtype)


def _attributes(d: Any) -> tuple[Any, ...]:
    """An object's own attributes, one level: its scalars (and short sequences of them) with their names, its
    tensors and its modules (Note [Guards on Python state])."""
    out: list[Any] = []
    for name, v in d.items():
        kind = _KINDS.get(v.__class__)
        if kind is None:
            kind = _kind(v.__class__)
        if kind == _SCALAR:
            out.append((name, v))
        elif kind == _SEQUENCE:
            if len(v) <= _SHORT and all(isinstance(a, _SCALARS) for a in v):
                out.append((name, tuple(v)))
        elif kind == _TENSOR:
            out.append((name, _tensor_state(v)))
        elif kind == _MODULE:
            out.append((name, _module_state(v)))
    return tuple(out)


def _module_state(root: Any) -> tuple[Any, ...]:
    """Of the module and every submodule, depth first (a plain walk: `modules()` costs ten times more): its
    class, its scalar attributes, its parameters and buffers as tensors, its hooks, and the scalars of plain
    objects it holds. Runs at every call: the common types are told apart by a dict lookup."""
    out: list[Any] = []
    append = out.append
    stack = [root]
    while stack:
        m = stack.pop()
        append(m.__class__)
        d = m.__dict__
        for v in d.values():
            kind = _ATTRIBUTE_KINDS.get(v.__class__)
            if kind is _SCALAR:
                append(v)
            elif kind is _SEQUENCE:  # scalars of exactly these types, read in C; not the empty hook lists
                if v and len(v) <= _SHORT and _SCALAR_TYPES.issuperset(map(type, v)):
                    append(tuple(v))
            elif kind is None:
                if isinstance(v, _SCALARS):
                    append(v)
                elif _kind(v.__class__) == _OBJECT and type(getattr(v, "__dict__", None)) is dict:
                    append(_scalars(v.__dict__))
        for t in d["_parameters"].values():
            append(_tensor_state(t))
        for t in d["_buffers"].values():
            append(_tensor_state(t))
        for name in _HOOKS:  # hooks run while the function is captured: which ones is part of the graph
            hooks = d.get(name)
            if hooks:
                append((name, *map(id, hooks)))
        stack.extend(c for c in reversed(d["_modules"].values()) if c is not None)
    return tuple(out)


def _scalars(d: dict[str, Any]) -> tuple[Any, ...]:
    return tuple((name, v) for name, v in d.items() if isinstance(v, _SCALARS))


# the attribute types of a module's __dict__ (the tables and hook lists are read on their own)
_ATTRIBUTE_KINDS: dict[type, int] = {**dict.fromkeys(_SCALARS, _SCALAR), tuple: _SEQUENCE, list: _SEQUENCE,
                                     dict: _SKIP, OrderedDict: _SKIP}
_KINDS: dict[type, int] = {}


def _kind(cls: type) -> int:
    """How python_state treats an instance of `cls` (kept per class; a module class is only ever seen once
    nn is imported)."""
    kind = _KINDS.get(cls)
    if kind is not None:
        return kind
    module_type = _module_type()
    if module_type is not None and issubclass(cls, module_type):
        kind = _MODULE
    elif issubclass(cls, _SCALARS) or cls is types.CodeType:
        kind = _SCALAR
    elif issubclass(cls, Tensor):
        kind = _TENSOR
    elif issubclass(cls, tuple | list):
        kind = _SEQUENCE
    elif issubclass(cls, dict):
        kind = _DICT
    elif issubclass(cls, type):
        kind = _CLASS
    elif issubclass(cls, (*_FUNCTIONS, types.ModuleType, types.BuiltinFunctionType)):
        kind = _SKIP
    else:
        kind = _OBJECT
    if module_type is not None or kind != _OBJECT:  # (a module class seen before nn is imported: not kept)
        _KINDS[cls] = kind
    return kind


class _Plan:
    """One function's places: the values it holds for life (a bound method's `self`, a callable object
    itself), its closure cells, its default arguments, and its globals dict with the global names its code
    loads."""

    __slots__ = ("function", "code", "home", "fixed", "cells", "defaults", "namespace", "names", "followed")

    def __init__(self, fn: Any) -> None:
        fixed: list[Any] = []
        if isinstance(fn, types.MethodType):
            fixed.append(fn.__self__)
            fn = fn.__func__
        self.function = fn
        self.code = None
        self.home: str | None = getattr(fn, "__module__", None)
        self.cells: tuple[Any, ...] = ()
        self.defaults: Any = None
        self.namespace: dict[str, Any] = {}
        self.names: tuple[str, ...] = ()
        if isinstance(fn, types.FunctionType):
            self.code = fn.__code__
            self.cells = fn.__closure__ or ()
            self.namespace = fn.__globals__
            self.names = _global_names(fn.__code__)
            self.defaults = fn  # its __defaults__ and __kwdefaults__ are read at each call (they can be set)
        elif callable(fn):
            fixed.append(fn)
        self.fixed = tuple(fixed)
        self.followed: dict[int, tuple[Any, _Plan]] = {}  # id -> (a function it holds, that one's plan)

    def read(self, depth: int, seen: set[int], out: list[Any]) -> None:
        """Append what the function holds now to `out`; functions among it are followed `depth - 1` levels
        (each once: `seen` holds the ids of those already read)."""
        out.extend(self.fixed)
        for cell in self.cells:
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            self._value(value, depth, seen, out)
        fn = self.defaults
        if fn is not None:
            for value in fn.__defaults__ or ():
                self._value(value, depth, seen, out)
            if fn.__kwdefaults__:
                for value in fn.__kwdefaults__.values():
                    self._value(value, depth, seen, out)
        namespace = self.namespace
        for name in self.names:
            value = namespace.get(name, namespace)  # (the dict itself: "absent", as no global holds its dict)
            if value is not namespace:
                self._value(value, depth, seen, out)

    def _value(self, value: Any, depth: int, seen: set[int], out: list[Any]) -> None:
        if isinstance(value, _FUNCTIONS):
            if depth > 1 and id(value) not in seen:
                seen.add(id(value))
                entry = self.followed.get(id(value))
                if entry is None or entry[0] is not value or (entry[1].code is not None
                                                               and entry[1].code is not entry[1].function.__code__):
                    if len(self.followed) > 64:  # functions rebound again and again: keep the newest
                        self.followed.clear()
                    entry = self.followed[id(value)] = (value, _Plan(value))
                plan = entry[1]
                if plan.code is not None:
                    out.append(plan.code)  # which function: a helper rebound to another one
                plan.read(depth - 1, seen, out)
        elif not isinstance(value, types.ModuleType):
            out.append(value)


def _module_type() -> type | None:
    """nn.Module, if the program has modules (nn sits beside this package in the layers: it is reached
    through the installed API, and only when already imported)."""
    nn = getattr(opcall.api, "__dict__", {}).get("nn")
    return getattr(nn, "Module", None)


@functools.cache
def _global_names(code: types.CodeType) -> tuple[str, ...]:
    """The global names `code` and the functions written inside it load, each once."""
    names: dict[str, None] = {}
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            names[ins.argval] = None
    for const in code.co_consts:
        if isinstance(const, types.CodeType):  # lambdas and inner functions
            names.update(dict.fromkeys(_global_names(const)))
    return tuple(names)
