"""`G.cuda`: device queries, streams and events, memory statistics. Works without CuPy.

`is_available()` never raises; everything that needs a device raises `CudaUnavailableError` saying what
to install. The memory functions and `OutOfMemoryError` come from runtime/cuda/memory.py (the caching
allocator), looked up when first used so that this module imports on any machine.
"""

from __future__ import annotations

from typing import Any

from runtime.cuda.device import (
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

_MEMORY_NAMES = ("memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved",
                 "max_memory_reserved", "reset_peak_memory_stats", "empty_cache", "memory_snapshot",
                 "memory_summary")
_ALLOCATOR_NAMES = ("OutOfMemoryError",)


def __getattr__(name: str) -> Any:
    """Re-export the allocator's public names lazily (runtime/cuda/memory.py imports CuPy on use only)."""
    if name in _MEMORY_NAMES:
        from runtime.cuda import memory

        return getattr(memory, name)
    if name in _ALLOCATOR_NAMES:
        from runtime.cuda import allocator

        return getattr(allocator, name)
    raise AttributeError(f"module 'runtime.cuda' has no attribute '{name}'")


__all__ = [
    "CUDA_INSTALL_HINT", "CudaUnavailableError", "Event", "Stream", "current_device", "current_stream",
    "device_count", "get_device_name", "get_device_properties", "is_available", "is_emulated", "require_cupy",
    "require_device", "set_device", "stream", "synchronize", "unavailable_reason", *_MEMORY_NAMES, *_ALLOCATOR_NAMES,
]
