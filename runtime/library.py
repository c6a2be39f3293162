"""The public registration API (`G.library`), after `torch.library`: add or override kernels at run time.

    G.library.impl("add.Tensor", "CPU", my_add)            # one op, one key; returns a Handle
    @G.library.impl("mul.Tensor", ["CPU", "CUDA"])          # as a decorator, several keys
    def my_mul(self, other): ...
    G.library.fallback("Tracer", lambda op, args: ...)      # a boxed fallback for a whole key
    with G.library.Library() as lib:                        # everything registered through `lib` is
        lib.impl("neg", my_neg, "CPU")                      # undone when the block ends
    op = G.library.define("myops::scale(Tensor x, float s) -> Tensor")

A kernel takes the op's arguments positionally in schema order (see DESIGN.md, "Conventions"). A
boxed fallback is called `fn(op, args)` with the Operator (`op.name`, `op.schema`) and the arguments as
a list; it usually re-dispatches below its own key with `op.redispatch_below(DispatchKey.X, *args)`.
Keys: the runtime keys of runtime.dispatcher.DispatchKey and the alias keys
CompositeImplicitAutograd / CompositeExplicitAutograd. Registrations at one (op, key) form a stack: the newest
serves, and every registration returns a Handle whose `remove()` takes out exactly that registration, in
any order (Note [Registration stacks] in runtime/dispatcher.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from runtime.dispatcher import (
    ALIAS_KEYS,
    DispatchKey,
    Kernel,
    Operator,
    dispatcher,
    dump,
    exclude_keys,
    include_keys,
)

__all__ = ["DispatchKey", "Handle", "Library", "define", "dump", "exclude_keys", "fallback", "impl",
           "include_keys", "op"]


class Handle:
    """One registration; `remove()` undoes it (idempotent). Usable as a context manager."""

    def __init__(self, undo: Callable[[], None], what: str) -> None:
        self._undo: Callable[[], None] | None = undo
        self.what = what

    def remove(self) -> None:
        if self._undo is not None:
            self._undo()
            self._undo = None

    def __enter__(self) -> Handle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def __repr__(self) -> str:
        return f"<Handle {self.what}{'' if self._undo else ' (removed)'}>"


def _op_name(qualname: str) -> str:
    """`aten::add.Tensor`, `opgen::add.Tensor` and `add.Tensor` all name `add.Tensor`."""
    name = qualname.split("::", 1)[-1]
    if name not in dispatcher.ops:
        if f"{name}.default" in dispatcher.ops:
            return f"{name}.default"
        close = sorted(n for n in dispatcher.ops if n.split(".")[0] == name.split(".")[0])
        hint = f"; overloads of that name: {', '.join(close)}" if close else ""
        raise KeyError(f"no operator named '{name}'{hint}")
    return name


def _keys(types: str | Sequence[str]) -> list[str]:
    keys = [types] if isinstance(types, str) else list(types)
    for key in keys:
        if key not in DispatchKey.__members__ and key not in ALIAS_KEYS:
            raise ValueError(f"unknown dispatch key '{key}'; known keys: "
                             f"{', '.join([*DispatchKey.__members__, *ALIAS_KEYS])}")
    return keys


def impl(qualname: str, types: str | Sequence[str], func: Kernel | None = None) -> Any:
    """Register `func` for the op at each key in `types`; without `func`, a decorator.

    Returns a Handle (or, as a decorator, the function unchanged with `.handle` set)."""
    name = _op_name(qualname)
    keys = _keys(types)

    def register(fn: Kernel) -> Handle:
        undos = [dispatcher.register(name, key, fn) for key in keys]

        def undo() -> None:
            for u in reversed(undos):
                u()

        return Handle(undo, f"{name} at {', '.join(keys)} -> {getattr(fn, '__qualname__', fn)}")

    if func is not None:
        return register(func)

    def decorator(fn: Kernel) -> Kernel:
        fn.handle = register(fn)  # type: ignore[attr-defined]
        return fn

    return decorator


def fallback(key: str, fn: Callable[[Operator, list[Any]], Any]) -> Handle:
    """A boxed fallback for every op at `key` (used where an op has no kernel of its own for that key)."""
    if key not in DispatchKey.__members__:
        raise ValueError(f"a fallback is registered for a runtime key ({', '.join(DispatchKey.__members__)}), "
                         f"not '{key}'")
    return Handle(dispatcher.register_fallback(key, fn), f"fallback at {key}")


def define(schema: str) -> Operator:
    """Declare a new operator from a schema (`"ns::name.overload(Tensor x, float s) -> Tensor"`).

    Call it with `op.call(*args)` or `G.library.op(name)(*args)` once a kernel is registered."""
    schema = schema.split("::", 1)[-1].strip()
    name = schema[: schema.index("(")]
    if name in dispatcher.ops:
        raise RuntimeError(f"operator '{name}' is already defined: {dispatcher.ops[name].schema}")
    positions = tuple(i for i, t in enumerate(_arg_types(schema)) if t.startswith("Tensor"))
    return dispatcher.declare(name, schema, positions)


def op(name: str) -> Callable[..., Any]:
    """A callable for an operator (boxed: arguments positionally in schema order)."""
    return dispatcher.find(_op_name(name)).call


def _arg_types(schema: str) -> list[str]:
    inner = schema[schema.index("(") + 1: schema.rindex(") ->")]
    types, depth, current = [], 0, ""
    for ch in inner + ",":
        depth += ch in "([" and 1 or 0
        depth -= ch in ")]" and 1 or 0
        if ch == "," and depth == 0:
            words = current.split("=")[0].split()
            if words and words[0] != "*":
                types.append(words[0])
            current = ""
        else:
            current += ch
    return types


class Library:
    """Registrations that are undone together (`lib.remove()` or the end of a `with` block)."""

    def __init__(self, ns: str = "opgen", kind: str = "IMPL") -> None:
        self.ns = ns
        self.kind = kind
        self._handles: list[Handle] = []
        self._defined: list[str] = []

    def define(self, schema: str) -> Operator:
        operator = define(schema)
        self._defined.append(operator.name)
        return operator

    def impl(self, op_name: str, fn: Kernel, dispatch_key: str = "CompositeImplicitAutograd") -> Handle:
        h = impl(op_name, dispatch_key, fn)
        self._handles.append(h)
        return h

    def fallback(self, fn: Callable[[Operator, list[Any]], Any], dispatch_key: str) -> Handle:
        h = fallback(dispatch_key, fn)
        self._handles.append(h)
        return h

    def remove(self) -> None:
        while self._handles:
            self._handles.pop().remove()
        for name in self._defined:
            dispatcher.ops.pop(name, None)
        self._defined.clear()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()
