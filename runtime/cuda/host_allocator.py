"""A caching allocator of pinned (page-locked) host memory, as THC's caching host allocator.

Pinned memory is slow to allocate (cudaHostAlloc maps pages for the device), so freed blocks are cached by
size (rounded up to a power of two) and reused. A block used by an asynchronous copy on some stream
(``record_stream``) is reused only after an event recorded on that stream at ``free`` time has completed, so
a non-blocking host-to-device copy never reads memory that has been handed out again.

It backs ``Tensor.pin_memory()`` (:func:`pin_memory`) and non-blocking host-to-device copies
(:func:`copy_host_to_device_async`). The raw interface is the device one (``malloc``/``free``/events), so
tests use :class:`SimulatedHostMemory`: real host buffers, with events from a SimulatedDevice.
"""

from __future__ import annotations

import ctypes
import threading
from bisect import bisect_right, insort
from types import ModuleType
from typing import Any

import numpy as np

from runtime.cuda.allocator import RawMemory, RawOutOfMemory, format_size
from runtime.cuda.simulated import SimulatedDevice

MIN_HOST_BLOCK = 512
_MEMCPY_HOST_TO_DEVICE = 1  # cudaMemcpyHostToDevice


def host_block_size(nbytes: int) -> int:
    """Cached host blocks are powers of two (at least 512 bytes)."""
    return max(MIN_HOST_BLOCK, 1 << max(nbytes - 1, 0).bit_length())


class _HostBlock:
    __slots__ = ("ptr", "size", "in_use", "streams", "event_count")

    def __init__(self, ptr: int, size: int) -> None:
        self.ptr = ptr
        self.size = size  # a power of two, >= MIN_HOST_BLOCK
        self.in_use = False  # False iff ptr is in _free[size]
        self.streams: set | None = None  # streams recorded while allocated
        self.event_count = 0  # outstanding events after free


class CachingHostAllocator:
    """Caches pinned host blocks by power-of-two size; reuse waits for the events of recorded streams."""

    def __init__(self, raw: RawMemory) -> None:
        self._raw = raw
        self._lock = threading.Lock()
        self._blocks: dict[int, _HostBlock] = {}  # every raw block, by base address
        self._bases: list[int] = []  # sorted keys of _blocks, to find the block holding any address
        self._free: dict[int, list[int]] = {}  # size -> bases of cached blocks (in_use False)
        self._events: list[tuple[Any, _HostBlock]] = []
        self._deferred: list[int] = []
        self.allocated_bytes = self.allocated_bytes_peak = 0  # sum of sizes of in-use blocks
        self.reserved_bytes = self.reserved_bytes_peak = 0  # sum of sizes of all blocks
        self.num_host_alloc = self.num_host_free = 0

    def malloc(self, nbytes: int) -> int:
        """A pinned block of at least ``nbytes`` bytes."""
        size = host_block_size(nbytes)
        with self._lock:
            self._drain()
            if self._events:
                self._process_events(wait=False)
            cached = self._free.get(size)
            if cached:
                block = self._blocks[cached.pop()]
            else:
                block = self._new_block(size)
            block.in_use = True
            self.allocated_bytes += size
            self.allocated_bytes_peak = max(self.allocated_bytes_peak, self.allocated_bytes)
            return block.ptr

    def free(self, ptr: int) -> None:
        """Return a block to the cache once the streams recorded on it have passed this point."""
        with self._lock:
            self._free_locked(ptr)

    def free_from_finalizer(self, ptr: int) -> None:
        if self._lock.acquire(blocking=False):
            try:
                self._free_locked(ptr)
            finally:
                self._lock.release()
        else:
            self._deferred.append(ptr)

    def record_stream(self, ptr: int, stream: Any) -> None:
        """Mark the block holding address ``ptr`` as used by work on ``stream``."""
        with self._lock:
            block = self._block_at(ptr)
            if block is None or not block.in_use:
                raise ValueError(f"record_stream on {ptr:#x}, which is not in an allocated pinned block")
            if block.streams is None:
                block.streams = set()
            block.streams.add(stream)

    def is_pinned(self, ptr: int) -> bool:
        with self._lock:
            return self._block_at(ptr) is not None

    def empty_cache(self) -> None:
        """Wait for outstanding events and release every cached block."""
        with self._lock:
            self._release_cached()

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"allocated_bytes.current": self.allocated_bytes,
                    "allocated_bytes.peak": self.allocated_bytes_peak,
                    "reserved_bytes.current": self.reserved_bytes,
                    "reserved_bytes.peak": self.reserved_bytes_peak,
                    "num_host_alloc": self.num_host_alloc, "num_host_free": self.num_host_free}

    def check_invariants(self) -> None:
        with self._lock:
            cached = [p for ptrs in self._free.values() for p in ptrs]
            if len(cached) != len(set(cached)) or any(self._blocks[p].in_use for p in cached):
                raise AssertionError("free lists hold a block twice or an in-use block")
            if {p for p, b in self._blocks.items() if not b.in_use} != set(cached):
                raise AssertionError("free lists differ from the blocks not in use")
            if self._bases != sorted(self._blocks):
                raise AssertionError("base index differs from the blocks")
            in_use = sum(b.size for b in self._blocks.values() if b.in_use and not b.event_count)
            reserved = sum(b.size for b in self._blocks.values())
            if in_use != self.allocated_bytes or reserved != self.reserved_bytes:
                raise AssertionError("host stats differ from the blocks")

    # internals (lock held)
    def _block_at(self, ptr: int) -> _HostBlock | None:
        i = bisect_right(self._bases, ptr) - 1
        if i < 0:
            return None
        block = self._blocks[self._bases[i]]
        return block if ptr < block.ptr + block.size else None

    def _new_block(self, size: int) -> _HostBlock:
        try:
            ptr = self._raw.malloc(size)
        except RawOutOfMemory:
            self._release_cached()
            try:
                ptr = self._raw.malloc(size)
            except RawOutOfMemory:
                raise MemoryError(f"out of pinned host memory: tried to allocate {format_size(size)} with "
                                  f"{format_size(self.reserved_bytes)} reserved by opgen") from None
        block = self._blocks[ptr] = _HostBlock(ptr, size)
        insort(self._bases, ptr)
        self.reserved_bytes += size
        self.reserved_bytes_peak = max(self.reserved_bytes_peak, self.reserved_bytes)
        self.num_host_alloc += 1
        return block

    def _free_locked(self, ptr: int) -> None:
        block = self._blocks.get(ptr)
        if block is None or not block.in_use or block.event_count:
            raise ValueError(f"free of {ptr:#x}, which is not an allocated pinned block")
        self.allocated_bytes -= block.size
        if block.streams:
            for stream in block.streams:
                self._events.append((self._raw.record_event(stream), block))
            block.event_count = len(block.streams)
            block.streams = None
            return
        block.in_use = False
        self._free.setdefault(block.size, []).append(ptr)

    def _drain(self) -> None:
        while self._deferred:
            self._free_locked(self._deferred.pop())

    def _process_events(self, wait: bool) -> None:
        pending = []
        for event, block in self._events:
            if wait:
                self._raw.synchronize_event(event)
            elif not self._raw.query_event(event):
                pending.append((event, block))
                continue
            block.event_count -= 1
            if block.event_count == 0:
                block.in_use = False
                self._free.setdefault(block.size, []).append(block.ptr)
        self._events = pending

    def _release_cached(self) -> None:
        self._drain()
        if self._events:
            self._process_events(wait=True)
        for ptrs in self._free.values():
            for ptr in ptrs:
                block = self._blocks.pop(ptr)
                del self._bases[bisect_right(self._bases, ptr) - 1]
                self._raw.free(ptr)
                self.reserved_bytes -= block.size
                self.num_host_free += 1
        self._free.clear()


class SimulatedHostMemory:
    """Host "pinned" memory for tests: NumPy buffers, a capacity, failures, a SimulatedDevice's events."""

    def __init__(self, capacity: int, device: SimulatedDevice | None = None) -> None:
        self.capacity = capacity
        self.device = device if device is not None else SimulatedDevice(0)
        self.device_index = self.device.device_index
        self.used = 0
        self.live: dict[int, np.ndarray] = {}
        self._fail = 0

    def malloc(self, nbytes: int) -> int:
        if self._fail > 0:
            self._fail -= 1
            raise RawOutOfMemory("injected failure")
        if self.used + nbytes > self.capacity:
            raise RawOutOfMemory(f"{nbytes} bytes requested, {self.capacity - self.used} free")
        buffer = np.zeros(nbytes, dtype=np.uint8)
        ptr = buffer.ctypes.data
        self.live[ptr] = buffer
        self.used += nbytes
        return ptr

    def free(self, ptr: int) -> None:
        self.used -= self.live.pop(ptr).nbytes

    def fail_next(self, n: int = 1) -> None:
        self._fail = n

    def mem_info(self) -> tuple[int, int]:
        return self.capacity - self.used, self.capacity

    def current_stream(self) -> Any:
        return self.device.current_stream()

    def record_event(self, stream: Any) -> Any:
        return self.device.record_event(stream)

    def query_event(self, event: Any) -> bool:
        return self.device.query_event(event)

    def synchronize_event(self, event: Any) -> None:
        self.device.synchronize_event(event)


class CupyPinnedMemory:
    """Real pinned memory: cudaHostAlloc/cudaFreeHost through CuPy, events as :class:`CupyRawMemory`."""

    def __init__(self, cupy: ModuleType | None = None) -> None:
        from runtime.cuda.cupy_pool import CupyRawMemory

        self._device_side = CupyRawMemory(0, cupy)
        self._runtime = self._device_side._runtime
        self.device_index = 0

    def malloc(self, nbytes: int) -> int:
        try:
            return self._runtime.hostAlloc(nbytes, 0)
        except self._runtime.CUDARuntimeError as err:
            if getattr(err, "status", None) == self._device_side._oom_status:
                raise RawOutOfMemory(str(err)) from err
            raise

    def free(self, ptr: int) -> None:
        self._runtime.freeHost(ptr)

    def mem_info(self) -> tuple[int, int]:
        return 0, 0

    def current_stream(self) -> Any:
        return self._device_side.current_stream()

    def record_event(self, stream: Any) -> Any:
        return self._device_side.record_event(stream)

    def query_event(self, event: Any) -> bool:
        return self._device_side.query_event(event)

    def synchronize_event(self, event: Any) -> None:
        self._device_side.synchronize_event(event)


_host_allocator: CachingHostAllocator | None = None
_host_lock = threading.Lock()


def get_host_allocator() -> CachingHostAllocator:
    """The process-wide pinned host allocator, created over CuPy on first use."""
    global _host_allocator
    with _host_lock:
        if _host_allocator is None:
            _host_allocator = CachingHostAllocator(CupyPinnedMemory())
        return _host_allocator


def set_host_allocator_for_testing(allocator: CachingHostAllocator | None) -> None:
    global _host_allocator
    with _host_lock:
        _host_allocator = allocator


class PinnedBuffer:
    """Owner of one pinned block; returned to the cache when the last array viewing it goes away."""

    def __init__(self, allocator: CachingHostAllocator, nbytes: int) -> None:
        self.allocator = allocator
        self.nbytes = nbytes
        self.ptr = allocator.malloc(nbytes)

    def __del__(self) -> None:
        ptr, self.ptr = getattr(self, "ptr", 0), 0
        if ptr:
            self.allocator.free_from_finalizer(ptr)


def pinned_empty(shape: tuple[int, ...], dtype: Any,
                 allocator: CachingHostAllocator | None = None) -> np.ndarray:
    """An uninitialised NumPy array in pinned memory (its base keeps the block alive)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    owner = PinnedBuffer(allocator or get_host_allocator(), nbytes)
    raw = (ctypes.c_uint8 * max(nbytes, 1)).from_address(owner.ptr)
    raw._opgen_owner = owner  # type: ignore[attr-defined]  # keeps the block alive as long as any view
    return np.frombuffer(raw, dtype=np.uint8, count=nbytes).view(dtype).reshape(shape)


def pin_memory(array: np.ndarray, allocator: CachingHostAllocator | None = None) -> np.ndarray:
    """A copy of ``array`` in pinned memory (what ``Tensor.pin_memory()`` stores)."""
    out = pinned_empty(array.shape, array.dtype, allocator)
    np.copyto(out, array)
    return out


def copy_host_to_device_async(dst_ptr: int, src: np.ndarray, stream: Any = None,
                              allocator: CachingHostAllocator | None = None,
                              cupy: ModuleType | None = None) -> None:
    """Start a non-blocking copy of contiguous pinned ``src`` to device address ``dst_ptr`` on ``stream``.

    The source block is recorded on ``stream`` so the cache does not reuse it before the copy has finished.
    """
    from runtime.cuda.cupy_pool import import_cupy

    cp = cupy if cupy is not None else import_cupy()
    if not src.flags.c_contiguous:
        raise ValueError("a non-blocking copy needs a contiguous pinned source")
    allocator = allocator or get_host_allocator()
    src_ptr = src.ctypes.data
    if not allocator.is_pinned(src_ptr):
        raise ValueError("a non-blocking host-to-device copy needs pinned memory (use pin_memory())")
    if stream is None:
        stream = int(cp.cuda.get_current_stream().ptr)
    cp.cuda.runtime.memcpyAsync(dst_ptr, src_ptr, src.nbytes, _MEMCPY_HOST_TO_DEVICE, stream)
    allocator.record_stream(src_ptr, stream)
