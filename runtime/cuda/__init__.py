"""`G.cuda`: device queries, streams and events, memory statistics. Works without CuPy.

`is_available()` never raises; everything that needs a device raises `CudaUnavailableError` saying what
to install.

Note [The CUDA backend loads on first use]
`import generated` loads nothing of the CUDA backend: this package names its public functions here and
imports the module that defines them (runtime/cuda/device.py: queries, streams, events; memory.py: the
caching allocator's statistics; allocator.py: `OutOfMemoryError`) when one is first asked for, through
the module `__getattr__` (PEP 562), then keeps it as an attribute of the package, so later uses are
plain attribute reads. The CUDA kernels register by name and load on their first call (Note [Kernels
loaded on first call] in runtime/dispatcher.py), and modules of the runtime that touch CUDA on a cold
path reach it as `cuda.<name>` from `from runtime import cuda`. So a program that never asks for a CUDA
tensor or query never imports the compile cache, the allocator or the launch code (hashlib, tempfile,
dataclasses and ctypes among them); `G.cuda.is_available()` imports device.py and answers as before.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# the CUDA backend's guard on the composite kernels it shares, in place before any CUDA tensor can exist
# (Note [Composite kernels and bfloat16]); it imports nothing of the backend
from runtime.cuda import composites  # noqa: F401

if TYPE_CHECKING:  # what type checkers see of the names below
    from runtime.cuda.allocator import OutOfMemoryError  # noqa: F401
    from runtime.cuda.device import (  # noqa: F401
        CUDA_INSTALL_HINT,
        CudaUnavailableError,
        Event,
        Stream,
        current_device,
        current_stream,
        device_count,
        get_device_name,
        get_device_properties,
        is_available,
        is_emulated,
        require_cupy,
        require_device,
        set_device,
        stream,
        synchronize,
        unavailable_reason,
    )
    from runtime.cuda.memory import (  # noqa: F401
        empty_cache,
        max_memory_allocated,
        max_memory_reserved,
        memory_allocated,
        memory_reserved,
        memory_snapshot,
        memory_stats,
        memory_summary,
        reset_peak_memory_stats,
    )

_DEVICE_NAMES = ("CUDA_INSTALL_HINT", "CudaUnavailableError", "Event", "Stream", "current_device", "current_stream",
                 "device_count", "get_device_name", "get_device_properties", "is_available", "is_emulated",
                 "require_cupy", "require_device", "set_device", "stream", "synchronize", "unavailable_reason")
_MEMORY_NAMES = ("memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved",
                 "max_memory_reserved", "reset_peak_memory_stats", "empty_cache", "memory_snapshot",
                 "memory_summary")
_ALLOCATOR_NAMES = ("OutOfMemoryError",)
# public name -> the module that defines it (Note [The CUDA backend loads on first use])
_DEFINED_IN = {**dict.fromkeys(_DEVICE_NAMES, "runtime.cuda.device"),
               **dict.fromkeys(_MEMORY_NAMES, "runtime.cuda.memory"),
               **dict.fromkeys(_ALLOCATOR_NAMES, "runtime.cuda.allocator")}


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use and kept (Note [The CUDA backend loads on first
    use])."""
    if name == "amp":  # the submodule G.cuda.amp, loaded on first use
        return importlib.import_module("runtime.cuda.amp")
    module = _DEFINED_IN.get(name)
    if module is None:
        raise AttributeError(f"module 'runtime.cuda' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_DEFINED_IN})


__all__ = [*_DEVICE_NAMES, *_MEMORY_NAMES, *_ALLOCATOR_NAMES]
