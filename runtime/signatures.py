"""The signatures and docstrings the generated API shows to `help()` and `inspect`, built from specs that
the generator writes (codegen/docstrings.py).

Note [Shown signatures]
An op function's `def` line keeps the defaults its overload choice needs: a parameter that only some
overloads take defaults to the not-given sentinel (`sum(input, dim=<not given>, ...)`), which the call
path tests with `is`. What `inspect.signature` shows is the parameter's real default instead (`dim=None`,
`keepdim=False`), set once at import as `__signature__`; the call path never reads it, so no call gets
slower. Tensor methods are copies of the op functions (the same code object, so the same speed) that
show `self` for the tensor and carry the method's own docstring.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

REQUIRED: Any = inspect.Parameter.empty   # a spec's default for a parameter without one

_POSITIONAL = inspect.Parameter.POSITIONAL_OR_KEYWORD
_KEYWORD = inspect.Parameter.KEYWORD_ONLY

# (name, keyword-only, default) per parameter, in order.
ParamSpec = tuple[tuple[str, bool, Any], ...]


def signature(params: ParamSpec) -> inspect.Signature:
    """The signature a spec describes."""
    return inspect.Signature([inspect.Parameter(name, _KEYWORD if kwonly else _POSITIONAL, default=default)
                              for name, kwonly, default in params])


def show(fn: Callable[..., Any], params: ParamSpec) -> None:
    """Make `inspect.signature(fn)` show the real defaults of a spec (Note [Shown signatures])."""
    fn.__signature__ = signature(params)  # type: ignore[attr-defined]


def method(fn: types.FunctionType, owner: str, doc: str, params: ParamSpec) -> types.FunctionType:
    """A copy of op function `fn` to install as a method of class `owner`: the same code, defaults and
    globals (so the same speed), its own docstring, and a signature that names the tensor `self`."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = f"{owner}.{fn.__name__}"
    copy.__module__ = fn.__module__
    copy.__doc__ = doc
    copy.__signature__ = signature(params)  # type: ignore[attr-defined]
    return copy
