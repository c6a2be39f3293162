"""Kernels registered by name and imported on their first call (Note [Kernels loaded on first call]).

`Dispatcher.on_first_call` hands out the stand-ins; this module holds the loader behind them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import partial
from typing import Any, Protocol

Kernel = Callable[..., Any]


class Registry(Protocol):
    """What the loader needs of the dispatcher (runtime.dispatcher.Dispatcher), which imports this module."""

    def replace_base_kernels(self, replacement: Callable[[Kernel | None], Kernel | None]) -> None: ...


class ModuleOnFirstCall:
    """Note [Kernels loaded on first call]
    Two groups of kernels serve calls that many programs never make: the CUDA backend's (with everything
    of runtime/cuda/ they import: the compile cache, the allocator, the launch code) and the generated
    Autograd kernels with their Node classes (generated/_autograd.py, a third of the generated Python,
    used only once a tensor requires grad). generated/_registrations.py registers them by name, as
    `dispatcher.on_first_call(module, function)`: a stand-in function named as the kernel it stands for
    (so `dump()` and `opgen show` print the same names), registered in the same `register_all` and the
    same order as every other kernel. The first call of any stand-in imports the module and, under the
    dispatcher's lock, puts the module's real kernels where its stand-ins are (found by identity as the
    base entry of each stack, so registrations made with `register` on top of one stay on top: Note
    [Registration stacks]), recomputes those tables, then runs the real kernel. From then on the tables
    hold the real kernels: no call pays anything after the first. The module is named by the layer that
    registers it (generated/), so the runtime still imports nothing above itself by its own choice;
    concurrent first calls both import (the import system serialises them) and the second finds no
    stand-in left to replace."""

    __slots__ = ("dispatcher", "module", "stubs")

    def __init__(self, dispatcher: Registry, module: str) -> None:
        self.dispatcher = dispatcher
        self.module = module
        self.stubs: dict[int, tuple[Kernel, str]] = {}  # id(stand-in) -> (stand-in, function name)

    def stub(self, function: str) -> Kernel:
        stub = partial(_first_call, self, function)  # a partial, not a closure: ~900 are made at import
        stub.__module__ = self.module  # type: ignore[attr-defined]
        stub.__qualname__ = function  # type: ignore[attr-defined]
        self.stubs[id(stub)] = (stub, function)
        return stub

    def load(self) -> Any:
        """Import the module and register its kernels where its stand-ins are; the module."""
        module = importlib.import_module(self.module)
        stubs = self.stubs

        def real(base: Kernel | None) -> Kernel | None:
            entry = stubs.get(id(base))
            return getattr(module, entry[1]) if entry is not None and entry[0] is base else None

        self.dispatcher.replace_base_kernels(real)
        return module


def _first_call(loader: ModuleOnFirstCall, function: str, *args: Any) -> Any:
    return getattr(loader.load(), function)(*args)
