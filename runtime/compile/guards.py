"""The Python state a compiled graph holds as constants, read at every call as part of its guards.

Note [Guards on Python state]
Capture records operators, so whatever Python value steered them is a constant of the graph: a module's
`training` flag (dropout, batch norm's statistics), a number or flag in a closure cell or a global the
function names. A call whose state differs must not run that graph. `python_state(fn)` reads, at every
call, the values the function can reach that way: the `training` flag of every submodule of each module it
holds (the module itself, a bound method's `self`, modules in its closure cells or among the globals its
code reads, and the modules passed as arguments), and the Python scalars (None, bool, int, float, str, and
short tuples and lists of them) in its closure cells and read globals, following the functions it holds
the same way one level down. The result joins the call's key, so a change compiles the new state once
and later calls with either state find theirs. What the code reads through attributes of other objects
(`cfg.scale`) is not seen: those stay constants of the graph, as the README says.

Where to look is found once per function, in a `StatePlan`: its closure cells (the cell objects, which a
function keeps for life), its globals dict and the names its code (and the code of lambdas and functions
written inside it) loads as globals (LOAD_GLOBAL; attribute names are not looked up). A call reads only
what the plan names: each cell's contents and each name in the globals dict now, so a cell rebound, a
global rebound or defined later, a function replaced by another in a cell or global (whose own plan is
then made, once, and kept), a module's `training` flag flipped, or a submodule added, replaced or removed
is seen at the very next call; nothing read is cached. A function whose `__code__` is replaced gets a new
plan. How a value is classified (module, scalar, short sequence, other) is kept per class.
"""

from __future__ import annotations

import dis
import functools
import types
from collections.abc import Callable
from typing import Any

from runtime import opcall

_SCALARS = (type(None), bool, int, float, str)
_SHORT = 16  # longest tuple or list of scalars that is guarded (longer ones are data, not switches)
_SKIP, _MODULE, _SCALAR, _SEQUENCE = range(4)
_FUNCTIONS = (types.FunctionType, types.MethodType)
_NOT_STATE = (types.ModuleType, type)
_GLOBAL_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS"})  # (the last: 3.12+)


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
        values: list[Any] = []
        plan.read(2, {id(self.fn)}, values)
        values.extend(args)
        if kwargs:
            values.extend(kwargs.values())
        out: list[Any] = []
        modules: set[int] | None = None
        kinds = _KINDS
        for x in values:
            kind = kinds.get(x.__class__)
            if kind is None:
                kind = _kind(x.__class__)
            if kind == _SKIP:
                continue
            if kind == _SCALAR:
                out.append(x)
            elif kind == _MODULE:
                if modules is None:
                    modules = set()
                if id(x) not in modules:
                    modules.add(id(x))
                    out.append(_training_flags(x))
            elif kind == _SEQUENCE and len(x) <= _SHORT and all(isinstance(a, _SCALARS) for a in x):
                out.append(tuple(x))
        return tuple(out)


class _Plan:
    """One function's places: the values it holds for life (a bound method's `self`, a callable object
    itself), its closure cells, and its globals dict with the global names its code loads."""

    __slots__ = ("function", "code", "fixed", "cells", "namespace", "names", "followed")

    def __init__(self, fn: Any) -> None:
        fixed: list[Any] = []
        if isinstance(fn, types.MethodType):
            fixed.append(fn.__self__)
            fn = fn.__func__
        self.function = fn
        self.code = None
        self.cells: tuple[Any, ...] = ()
        self.namespace: dict[str, Any] = {}
        self.names: tuple[str, ...] = ()
        if isinstance(fn, types.FunctionType):
            self.code = fn.__code__
            self.cells = fn.__closure__ or ()
            self.namespace = fn.__globals__
            self.names = _global_names(fn.__code__)
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
                entry[1].read(depth - 1, seen, out)
        elif not isinstance(value, _NOT_STATE):
            out.append(value)


_KINDS: dict[type, int] = {}


def _kind(cls: type) -> int:
    """How python_state treats an instance of `cls` (kept per class; a module class is only ever seen once
    nn is imported)."""
    module_type = _module_type()
    if module_type is not None and issubclass(cls, module_type):
        kind = _MODULE
    elif issubclass(cls, _SCALARS):
        kind = _SCALAR
    elif issubclass(cls, tuple | list):
        kind = _SEQUENCE
    else:
        kind = _SKIP
    _KINDS[cls] = kind
    return kind


def _training_flags(root: Any) -> tuple[bool, ...]:
    """Every submodule's `training` flag, depth first (a plain walk: `modules()` costs ten times more)."""
    flags: list[bool] = []
    _flags_into(root.__dict__, flags)
    return tuple(flags)


def _flags_into(d: dict[str, Any], flags: list[bool]) -> None:
    flags.append(d.get("training", True))
    for child in d["_modules"].values():
        if child is not None:
            cd = child.__dict__
            if cd["_modules"]:
                _flags_into(cd, flags)
            else:  # a leaf (most modules): no call
                flags.append(cd.get("training", True))


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
        if ins.opname in _GLOBAL_LOADS:
            names[ins.argval] = None
    for const in code.co_consts:
        if isinstance(const, types.CodeType):  # lambdas and inner functions
            names.update(dict.fromkeys(_global_names(const)))
    return tuple(names)
