"""Everything that touches CuPy for device memory: the real raw backend and CuPy's allocator hook.

CuPy is imported lazily (this module imports without it). Each entry point takes an optional ``cupy`` module
object so tests can drive the code paths with a fake module on machines without CuPy.

Note [One pool for everything]
------------------------------
opgen's CUDA tensors and CuPy's own allocations (cuBLAS workspaces, temporaries of CuPy kernels) share
one :class:`~runtime.cuda.allocator.CachingAllocator` per device. A request is served as a CuPy
``MemoryPointer`` over ``UnownedMemory`` whose owner is a :class:`PoolAllocation`; when CuPy drops the last
reference, the owner's finaliser returns the block to our pool. ``install()`` makes that CuPy's allocator
(``cupy.cuda.set_allocator``), so CuPy never keeps a second cache of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from runtime.cuda.allocator import CachingAllocator, RawOutOfMemory

_ERROR_MEMORY_ALLOCATION = 2  # cudaErrorMemoryAllocation


def import_cupy() -> ModuleType:
    """Import CuPy or explain how to install it (the emulated device's module under OPGEN_EMULATE_CUDA=1)."""
    import runtime.cuda.emulator as emulator

    if emulator.active():
        from runtime.cuda.emulator import xp

        return xp
    try:
        import cupy
    except ImportError as err:  # pragma: no cover - depends on the machine
        raise RuntimeError("CUDA support needs CuPy: pip install 'opgen[cuda12]' "
                           "(or 'opgen[cuda13]')") from err
    return cupy


class CupyRawMemory:
    """The real raw-memory backend of one device: cudaMalloc/cudaFree, streams and events through CuPy."""

    def __init__(self, device_index: int = 0, cupy: ModuleType | None = None) -> None:
        self._cp = cupy if cupy is not None else import_cupy()
        self.device_index = device_index
        self._runtime = self._cp.cuda.runtime
        self._oom_status = getattr(self._runtime, "errorMemoryAllocation", _ERROR_MEMORY_ALLOCATION)

    def _on_device(self) -> int:
        previous = self._runtime.getDevice()
        if previous != self.device_index:
            self._runtime.setDevice(self.device_index)
        return previous

    def malloc(self, nbytes: int) -> int:
        previous = self._on_device()
        try:
            return self._runtime.malloc(nbytes)
        except self._runtime.CUDARuntimeError as err:
            if getattr(err, "status", None) == self._oom_status:
                raise RawOutOfMemory(str(err)) from err
            raise
        finally:
            if previous != self.device_index:
                self._runtime.setDevice(previous)

    def free(self, ptr: int) -> None:
        previous = self._on_device()
        try:
            self._runtime.free(ptr)
        finally:
            if previous != self.device_index:
                self._runtime.setDevice(previous)

    def mem_info(self) -> tuple[int, int]:
        previous = self._on_device()
        try:
            free, total = self._runtime.memGetInfo()
        finally:
            if previous != self.device_index:
                self._runtime.setDevice(previous)
        return int(free), int(total)

    def current_stream(self) -> int:
        return int(self._cp.cuda.get_current_stream().ptr)

    def record_event(self, stream: int) -> Any:
        event = self._cp.cuda.Event(disable_timing=True)
        event.record(self._cp.cuda.ExternalStream(stream, self.device_index))
        return event

    def query_event(self, event: Any) -> bool:
        return bool(event.done)

    def synchronize_event(self, event: Any) -> None:
        event.synchronize()


class PoolAllocation:
    """Owner of one pool block handed to CuPy; its finaliser frees the block back into the pool."""

    __slots__ = ("allocator", "ptr", "__weakref__")

    def __init__(self, allocator: CachingAllocator, ptr: int) -> None:
        self.allocator = allocator
        self.ptr = ptr

    def __del__(self) -> None:
        ptr, self.ptr = self.ptr, 0
        if ptr:
            self.allocator.free_from_finalizer(ptr)


def memory_pointer(allocator: CachingAllocator, nbytes: int, device_index: int = 0, stream: Any = None,
                   cupy: ModuleType | None = None) -> Any:
    """Allocate ``nbytes`` from ``allocator`` as a CuPy ``MemoryPointer`` that frees into the pool."""
    cp = cupy if cupy is not None else import_cupy()
    ptr = allocator.malloc(nbytes, stream)
    owner = PoolAllocation(allocator, ptr)
    mem = cp.cuda.UnownedMemory(ptr, nbytes, owner, device_index)
    return cp.cuda.MemoryPointer(mem, 0)


def install(get_allocator: Callable[[int], CachingAllocator],
            cupy: ModuleType | None = None) -> Callable[[int], Any]:
    """Route CuPy's device allocations into opgen's pool (``cupy.cuda.set_allocator``); returns the hook."""
    cp = cupy if cupy is not None else import_cupy()

    def allocate(nbytes: int) -> Any:
        device_index = cp.cuda.runtime.getDevice()
        return memory_pointer(get_allocator(device_index), nbytes, device_index, cupy=cp)

    cp.cuda.set_allocator(allocate)
    return allocate


def uninstall(cupy: ModuleType | None = None) -> None:
    """Give CuPy back its default allocator (its own MemoryPool)."""
    cp = cupy if cupy is not None else import_cupy()
    cp.cuda.set_allocator(cp.cuda.MemoryPool().malloc)
