"""Grad mode: whether ops record the backward graph, per thread.

Grad mode off is the Autograd bit cleared in the dispatcher's thread-local mask (`tls.mask`), so an
op called under `no_grad` never reaches its Autograd kernel (Note [Dispatch key sets as bitmasks],
runtime/dispatcher.py). Each context manager below is also a decorator; `set_grad_enabled(b)` also
works as a plain call, as in PyTorch.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from runtime.dispatcher import AUTOGRAD_BIT, tls

F = TypeVar("F", bound=Callable[..., Any])


def is_grad_enabled() -> bool:
    """True when ops on tensors that require grad record the backward graph (this thread)."""
    return bool(tls.mask & AUTOGRAD_BIT)


def _set_enabled(mode: bool) -> None:
    if mode:
        tls.mask |= AUTOGRAD_BIT
    else:
        tls.mask &= ~AUTOGRAD_BIT


class _GradModeContext:
    """Base of the grad-mode context managers: enter sets a mode, exit restores the previous one."""

    def __init__(self) -> None:
        self.prev = is_grad_enabled()

    def _mode(self) -> bool:
        raise NotImplementedError

    def __enter__(self) -> None:
        self.prev = is_grad_enabled()
        _set_enabled(self._mode())

    def __exit__(self, *exc: object) -> None:
        _set_enabled(self.prev)

    def _fresh(self) -> _GradModeContext:
        return type(self)()

    def __call__(self, func: F) -> F:
        """Use as a decorator: every call runs in a fresh context (re-entrant, thread-safe)."""

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self._fresh():
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class no_grad(_GradModeContext):
    """Disable graph recording: `with G.no_grad():` or `@G.no_grad()`."""

    def _mode(self) -> bool:
        return False


class enable_grad(_GradModeContext):
    """Enable graph recording (e.g. inside `no_grad`): `with G.enable_grad():` or `@G.enable_grad()`."""

    def _mode(self) -> bool:
        return True


class set_grad_enabled(_GradModeContext):
    """Set grad mode to `mode`: immediately as a plain call, for a block as a context manager, or as a
    decorator; leaving the block (or the decorated call) restores the mode found on entry."""

    def __init__(self, mode: bool) -> None:
        self.prev = is_grad_enabled()
        self.mode = bool(mode)
        _set_enabled(self.mode)

    def _mode(self) -> bool:
        return self.mode

    def __enter__(self) -> None:
        _set_enabled(self.mode)  # `prev` is the mode found by __init__, before it switched

    def _fresh(self) -> _GradModeContext:
        ctx = object.__new__(set_grad_enabled)
        ctx.mode = self.mode
        ctx.prev = is_grad_enabled()
        return ctx

    def __call__(self, func: F) -> F:
        _set_enabled(self.prev)  # used as a decorator: undo the switch done by __init__
        return super().__call__(func)


class inference_mode(_GradModeContext):
    """Like `no_grad` (opgen has no separate inference tensors); `inference_mode(False)` is a no-op."""

    def __init__(self, mode: bool = True) -> None:
        super().__init__()
        self.mode = bool(mode)

    def _mode(self) -> bool:
        return False if self.mode else self.prev

    def _fresh(self) -> _GradModeContext:
        return inference_mode(self.mode)


class set_multithreading_enabled:
    """Whether backward may run device threads (PyTorch's flag). opgen's engine runs every backward on the
    calling thread, so the flag is kept and read back and changes nothing."""

    _enabled = True

    def __init__(self, mode: bool) -> None:
        self.prev = set_multithreading_enabled._enabled
        set_multithreading_enabled._enabled = bool(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        set_multithreading_enabled._enabled = self.prev

    @staticmethod
    def is_enabled() -> bool:
        return set_multithreading_enabled._enabled
