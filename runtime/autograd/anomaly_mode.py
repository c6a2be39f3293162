"""Anomaly detection (torch.autograd.detect_anomaly / set_detect_anomaly).

Note [Anomaly mode]
While anomaly mode is on, the engine checks every gradient a node returns and raises, naming the node and
the position, when one holds a NaN (`check_nan`); nodes of custom Functions (function_node.py) also keep
the stack of the forward call that made them, and the error adds it, as PyTorch prints "Traceback of
forward call that caused the error". The generated nodes keep none: their construction is inlined for
speed (Note [Lean node construction], node.py), so the error names them without a forward trace. The mode
is process-wide, as PyTorch's is. The engine reads one module attribute per node when it is off.
"""

from __future__ import annotations

import functools
import traceback
import warnings
from collections.abc import Callable
from typing import Any

_state = {"enabled": False, "check_nan": True}
enabled = False  # read by the engine on every node: a module attribute, kept equal to _state["enabled"]


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection (detect_anomaly / set_detect_anomaly) is on."""
    return _state["enabled"]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection, when on, also checks backward's results for NaN (True unless check_nan=False)."""
    return _state["check_nan"]


def _set(mode: bool, check_nan: bool) -> None:
    global enabled
    _state["enabled"] = enabled = bool(mode)
    _state["check_nan"] = bool(check_nan)


class detect_anomaly:
    """Context manager (or decorator) that turns anomaly detection on for its block (Note [Anomaly mode])."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self._saved: list[tuple[bool, bool]] = []
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should "
                      "only be enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        self._saved.append((_state["enabled"], _state["check_nan"]))
        _set(True, self.check_nan)

    def __exit__(self, *exc: object) -> None:
        _set(*self._saved.pop())

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)
        return run


class set_detect_anomaly:
    """Turn anomaly detection on or off: at once, and back as it was at the end of a `with` block."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._previous = (_state["enabled"], _state["check_nan"])
        _set(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _set(*self._previous)


def forward_trace() -> list[str] | None:
    """The current stack, for a node made now, while anomaly mode is on."""
    return traceback.format_stack()[:-2] if enabled else None


def check_gradients(fn: Any, outputs: list[Any]) -> None:
    """Raise if a gradient `fn` returned holds a NaN (called by the engine in anomaly mode)."""
    if not _state["check_nan"]:
        return
    for i, g in enumerate(outputs):
        if g is not None and g.is_floating_point() and bool(g.isnan().any()):
            msg = f"Function '{fn.name()}' returned nan values in its {i}th output."
            trace = getattr(fn, "_forward_trace", None)
            if trace:
                msg += "\nTraceback of forward call that caused the error:\n" + "".join(trace)
            raise RuntimeError(msg)


__all__ = ["detect_anomaly", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "set_detect_anomaly"]
