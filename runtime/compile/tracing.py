"""What capture.py and step_capture.py share: the capture in progress in this thread, how to run code
unrecorded inside it, and the exception that ends it (Note [Capture through the dispatcher])."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from runtime.dispatcher import exclude_keys


class GraphBreak(Exception):
    """The function did something a graph cannot hold; the message says what."""


class _State(threading.local):
    trace: Any = None  # the capture in progress (capture.py's _Trace), None outside one


state = _State()


@contextmanager
def suspended() -> Iterator[None]:
    """Real execution, not recorded, inside a capture (the optimizer's own update, a detach)."""
    trace = state.trace
    state.trace = None
    try:
        with exclude_keys("Tracer"):
            yield
    finally:
        state.trace = trace
