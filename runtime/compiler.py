"""`G.compile`: opgen has no graph compiler; compiling returns the module or function itself.

PyTorch programs call `model = torch.compile(model)` (often behind a flag) and run the result as the
model; opgen's ops already run as they are called, so the result is the same object and computes the same
values. The keyword arguments are checked for the names torch.compile takes and otherwise ignored."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_KNOWN = frozenset({"fullgraph", "dynamic", "backend", "mode", "options", "disable"})


def compile(model: Any = None, **kwargs: Any) -> Any:
    """The module or function unchanged (used as `compile(m)`, `@compile` or `@compile(mode=...)`)."""
    unknown = set(kwargs) - _KNOWN
    if unknown:
        raise TypeError(f"compile() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
    if model is None:
        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            return fn
        return decorate
    if not callable(model):
        raise RuntimeError(f"compile: expected a module or a function, got {type(model).__name__}")
    return model


__all__ = ["compile"]
