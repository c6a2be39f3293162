"""Which kernels a piece of test code launched, for failure messages that name the kernel instance (on the
emulated device, from the host engine's launch counts; on a GPU the list stays empty)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from runtime.cuda import emulator


@contextlib.contextmanager
def launched() -> Iterator[list[str]]:
    """A list that, after the block, holds the names of the kernels launched inside it."""
    names: list[str] = []
    if not emulator.active():
        yield names
        return
    from runtime.cuda.emulator import engine

    before = {key: fn.launches for key, fn in engine._FUNCTIONS.items()}
    try:
        yield names
    finally:
        names += sorted(fn.kernel for key, fn in engine._FUNCTIONS.items() if fn.launches != before.get(key, 0))


def named(names: list[str]) -> str:
    return f" [kernels: {', '.join(names)}]" if names else ""
