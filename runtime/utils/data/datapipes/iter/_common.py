"""What several pipes share: the length of a pipe over another, and the check of a column argument."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sized
from typing import Any


def source_len(pipe: Any, source: Any) -> int:
    if isinstance(source, Sized):
        return len(source)
    raise TypeError(f"{type(pipe).__name__} instance doesn't have valid length")


def validate_input_col(fn: Callable[..., Any], input_col: Any) -> None:
    """`fn` must take as many positional arguments as `input_col` names columns (one for a single column)."""
    try:
        sig = inspect.signature(fn)
    except ValueError:  # builtins without a signature
        return
    n = len(input_col) if isinstance(input_col, (list, tuple)) else 1
    params = list(sig.parameters.values())
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    if not len(required) <= n <= len(positional):
        name = getattr(fn, "__name__", repr(fn))
        raise ValueError(f"The function {name} takes {len(positional)} parameters, but {n} columns are given "
                         f"by input_col={input_col!r}")
