"""Named tuples for ops that return several named values, as `torch.return_types`: `G.max(t, 1).values`.

The generated binding of an op whose schema names every return (`-> (Tensor values, Tensor indices)`) wraps the
kernel's tuple in the class `make(op name, field names)` gives; every overload of one name shares the class.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

_CLASSES: dict[tuple[str, tuple[str, ...]], Any] = {}


def _repr(self: Any) -> str:
    fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self, strict=True))
    return f"opgen.return_types.{type(self).__name__}(\n{fields})"


def make(name: str, fields: tuple[str, ...]) -> Any:
    """The named tuple class of op `name` (`max`, `sort`) with `fields` (`values`, `indices`)."""
    key = (name, fields)
    if key not in _CLASSES:
        cls: Any = namedtuple(name, fields, module=__name__)  # type: ignore[misc]
        cls.__repr__ = _repr  # type: ignore[method-assign]
        cls.__str__ = _repr  # type: ignore[method-assign]
        _CLASSES[key] = cls
    return _CLASSES[key]
