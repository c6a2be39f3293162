"""`G.ops`: the operators by their schema names, as torch.ops spells them: `G.ops.aten.add.Tensor`,
`G.ops.aten._safe_softmax.default`, `G.ops.aten.sum` (a packet of every overload of the name).

Every operator of opgen's dispatcher is reachable under the `aten` namespace (opgen's ops are aten's
schemas) and under `opgen` (where `G.library.define` puts new ones). A name with no operator is an
AttributeError that names the close ones. Calling an overload or a packet runs the op's public binding
(`G.add`), which takes keywords and defaults and picks the overload from the arguments; an operator with
no public binding (a method-only op, one made with `G.library.define`) is called boxed, its arguments
positional in schema order.
"""

from __future__ import annotations

from typing import Any

from runtime import opcall
from runtime.dispatcher import dispatcher

__all__ = ["OpOverload", "OpOverloadPacket", "aten", "opgen"]


def _overloads(name: str) -> list[str]:
    """The overload names of the operator `name` ('default' for the one without an overload name)."""
    found = []
    for key in dispatcher.ops:
        base, _, overload = key.partition(".")
        if base == name:
            found.append(overload or "default")
    return sorted(found)


def _call_target(name: str, key: str) -> Any:
    binding = getattr(opcall.ops, name, None)
    if callable(binding):
        return binding
    return dispatcher.find(key).call


class OpOverload:
    """One overload of an operator (`G.ops.aten.add.Tensor`); calling it calls the op."""

    def __init__(self, name: str, overload: str, namespace: str = "aten") -> None:
        self.name = name
        self.overload = overload
        self.namespace = namespace
        self._key = name if overload == "default" else f"{name}.{overload}"

    @property
    def schema(self) -> str:
        """The overload's schema, as native_functions.yaml declares it."""
        return dispatcher.ops[self._key].schema

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _call_target(self.name, self._key)(*args, **kwargs)

    def __repr__(self) -> str:
        return f"{self.namespace}.{self.name}.{self.overload}"


class OpOverloadPacket:
    """Every overload of one operator name (`G.ops.aten.sum`); calling it calls the op's public binding,
    which picks the overload from the arguments."""

    def __init__(self, name: str, namespace: str = "aten") -> None:
        self.name = name
        self.namespace = namespace

    def overloads(self) -> list[str]:
        return _overloads(self.name)

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        known = _overloads(self.name)
        if overload not in known:
            raise AttributeError(f"the operator '{self.name}' has no overload '{overload}'; its overloads: "
                                 f"{', '.join(known)}")
        return OpOverload(self.name, overload, self.namespace)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key = self.name if self.name in dispatcher.ops else f"{self.name}.{_overloads(self.name)[0]}"
        return _call_target(self.name, key)(*args, **kwargs)

    def __repr__(self) -> str:
        return f"{self.namespace}.{self.name}"


class _Namespace:
    """`G.ops.aten`: an attribute per operator name."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, name: str) -> OpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)
        if not _overloads(name):
            close = sorted({k.partition(".")[0] for k in dispatcher.ops if k.startswith(name[:4])})[:8]
            hint = f"; names that begin alike: {', '.join(close)}" if close else ""
            raise AttributeError(f"'{self._name}' has no operator named '{name}'{hint}")
        return OpOverloadPacket(name, self._name)

    def __dir__(self) -> list[str]:
        return sorted({k.partition(".")[0] for k in dispatcher.ops})

    def __repr__(self) -> str:
        return f"<namespace {self._name}>"


aten = _Namespace("aten")
opgen = _Namespace("opgen")
