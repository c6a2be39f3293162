"""Per-device caching allocators and PyTorch's ``torch.cuda`` memory API (re-exported as ``G.cuda.*``).

One :class:`~runtime.cuda.allocator.CachingAllocator` per device index, created on first use over the real
CuPy backend; tests install one over a SimulatedDevice with :func:`set_allocator_for_testing`.
"""

from __future__ import annotations

import threading
from typing import Any

import runtime.cuda.emulator as emulator
from runtime.cuda.allocator import CachingAllocator, format_size
from runtime.cuda.cupy_pool import CupyRawMemory, memory_pointer

_allocators: dict[int, CachingAllocator] = {}
_lock = threading.Lock()


def get_allocator(device_index: int = 0) -> CachingAllocator:
    """The caching allocator of ``device_index``, created over CuPy on first use."""
    allocator = _allocators.get(device_index)
    if allocator is None:
        with _lock:
            allocator = _allocators.get(device_index)
            if allocator is None:
                allocator = _allocators[device_index] = CachingAllocator(_raw_memory(device_index))
    return allocator


def _raw_memory(device_index: int) -> Any:
    """CuPy's cudaMalloc, or the emulated device's host-backed memory under OPGEN_EMULATE_CUDA=1."""
    if emulator.active():
        from runtime.cuda.emulator import xp
        from runtime.cuda.emulator.memory import HostBackedDevice, capacity_from_env

        return HostBackedDevice(capacity_from_env(), device_index,
                                current_stream=lambda: xp.get_current_stream().ptr)

    return CupyRawMemory(device_index)


def set_allocator_for_testing(device_index: int, allocator: CachingAllocator | None) -> None:
    """Use ``allocator`` for ``device_index`` (``None`` forgets it, so the next use creates a real one)."""
    with _lock:
        if allocator is None:
            _allocators.pop(device_index, None)
        else:
            _allocators[device_index] = allocator


def _device_index(device: Any) -> int:
    if device is None:
        return 0
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        _, _, tail = device.partition(":")
        return int(tail) if tail else 0
    index = getattr(device, "index", None)  # a Device object
    return int(index) if index is not None else 0


def cuda_malloc(nbytes: int, device_index: int = 0, stream: Any = None) -> Any:
    """Device memory for tensor storage: a CuPy ``MemoryPointer`` that frees into the pool when dropped."""
    return memory_pointer(get_allocator(device_index), nbytes, device_index, stream)


def memory_stats(device: Any = None) -> dict[str, int]:
    """PyTorch-style flat statistics of a device's allocator (``allocated_bytes.all.current``, ...)."""
    return get_allocator(_device_index(device)).stats()


def memory_allocated(device: Any = None) -> int:
    """Bytes currently held by allocations (rounded block sizes)."""
    return memory_stats(device)["allocated_bytes.all.current"]


def max_memory_allocated(device: Any = None) -> int:
    """Peak of :func:`memory_allocated` since start or the last :func:`reset_peak_memory_stats`."""
    return memory_stats(device)["allocated_bytes.all.peak"]


def memory_reserved(device: Any = None) -> int:
    """Bytes of device memory held in segments (allocated or cached)."""
    return memory_stats(device)["reserved_bytes.all.current"]


def max_memory_reserved(device: Any = None) -> int:
    """Peak of :func:`memory_reserved`."""
    return memory_stats(device)["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device: Any = None) -> None:
    """Set every peak statistic to its current value."""
    get_allocator(_device_index(device)).reset_peak_stats()


def empty_cache() -> None:
    """Return every cached, unused segment of every device to the driver."""
    with _lock:
        allocators = list(_allocators.values())
    for allocator in allocators:
        allocator.empty_cache()


def memory_snapshot() -> list[dict[str, Any]]:
    """Every segment of every device with its blocks (``device``, ``address``, ``total_size``, ``blocks``)."""
    with _lock:
        allocators = sorted(_allocators.items())
    return [segment for _, allocator in allocators for segment in allocator.snapshot()]


_SUMMARY_ROWS = [
    ("Allocated memory", "allocated_bytes", True),
    ("Active memory", "active_bytes", True),
    ("GPU reserved memory", "reserved_bytes", True),
    ("Non-releasable memory", "inactive_split_bytes", True),
    ("Allocations", "allocation", False),
    ("Active allocs", "active", False),
    ("GPU reserved segments", "segment", False),
    ("Non-releasable allocs", "inactive_split", False),
]


def _summary_row(title: str, current: str, peak: str, allocated: str, freed: str) -> str:
    return f" {title:<24}| {current:>11} | {peak:>11} | {allocated:>10} | {freed:>9}"


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """A readable table of :func:`memory_stats` (current, peak, total allocated and freed)."""
    index = _device_index(device)
    stats = memory_stats(index)
    width = 75
    header = ("Metric", "Cur Usage", "Peak Usage", "Tot Alloc", "Tot Freed")
    lines = ["=" * width, f" opgen CUDA memory summary, device ID {index}", "-" * width,
             _summary_row(*header), "-" * width]
    for title, key, is_bytes in _SUMMARY_ROWS:
        cells = []
        for field in ("current", "peak", "allocated", "freed"):
            value = stats.get(f"{key}.all.{field}")
            if value is None:
                cells.append("")
            else:
                cells.append(format_size(value) if is_bytes else str(value))
        lines.append(_summary_row(title, *cells))
    if not abbreviated:
        lines.append("-" * width)
        for key in ("num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free"):
            lines.append(f" {key:<24}| {stats[key]:>11}")
    lines.append("=" * width)
    return "\n".join(lines) + "\n"


# Note [The emulator reaches the caching allocator through hooks] (runtime/cuda/emulator/__init__.py)
emulator.get_allocator = get_allocator
emulator.cuda_malloc = cuda_malloc
