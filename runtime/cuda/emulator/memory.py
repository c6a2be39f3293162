"""Device memory of the emulated CUDA device: a SimulatedDevice whose addresses have host bytes behind them.

The caching allocator (runtime/cuda/allocator.py) sits on top exactly as on a GPU; only the raw layer
differs: a raw allocation is an anonymous host mapping aligned like cudaMalloc's, its address is the real
address of those bytes (so kernels on the host engine dereference device pointers directly). Note [Guard
pages]: every raw allocation is mapped with an inaccessible page on each side and placed to end right at
the upper one, so a kernel that reads or writes past either end of a raw block faults, and the engine
reports the fault as an error (Note [Faults] in opgen_emulate.h) instead of reading a neighbour's bytes.
Fresh memory up to POISON_LIMIT bytes is filled with 0xFF bytes (NaN in every float type, -1 in every
integer type) so a kernel that reads memory it never wrote shows garbage, as on a GPU; larger blocks are
left as the zero pages the kernel maps on first touch, so a view with strides past 2**32 costs only the
pages it touches. Work runs at launch, so every event is complete when recorded.

Note [Repeated pages]: a kernel over 2**31 elements, emulated, strides each thread through the whole buffer
(a grid-stride loop), so nearly every access misses the CPU's caches: about 25 s a pass over 2 GiB. Inside
`repeated_pages()`, a new raw block is one PERIOD-byte page set mapped again and again over its length,
except its last TAIL bytes, which are its own: the kernels still index every element of a 2**31-element
tensor (every index path and offset is the real one), but the data fits in the cache, and an element
near the end is distinct memory, so a kernel that stops short of the end or wraps an index is still seen.
Only for data whose values repeat with the period (a constant tensor, an output checked near its end).
"""

from __future__ import annotations

import contextlib
import ctypes
import mmap
import os
from collections.abc import Iterator

from runtime.cuda.simulated import SimulatedDevice

DEFAULT_CAPACITY = 8 << 30
CAPACITY_VAR = "OPGEN_EMULATE_CUDA_MEMORY"
POISON_LIMIT = 1 << 30
PAGE = mmap.PAGESIZE

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)
_PROT_NONE = 0
_MAP_FIXED = getattr(mmap, "MAP_FIXED", 0x10)


def map_guarded(nbytes: int, alignment: int) -> tuple[int, int, int]:
    """(mapping base, mapping length, block address) of `nbytes` between two guard pages, the block ending
    at the upper guard page (rounded up to `alignment`, a divisor of the page size). Note [Guard pages]."""
    body = -(-max(nbytes, 1) // PAGE) * PAGE
    length = body + 2 * PAGE
    base = _libc.mmap(None, length, _PROT_NONE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE, -1, 0)
    if base in (None, ctypes.c_void_p(-1).value):
        raise MemoryError(f"cannot map {nbytes} bytes for the emulated device (errno {ctypes.get_errno()})")
    if _libc.mprotect(base + PAGE, body, mmap.PROT_READ | mmap.PROT_WRITE) != 0:
        _libc.munmap(base, length)
        raise MemoryError(f"cannot map {nbytes} bytes for the emulated device (errno {ctypes.get_errno()})")
    return base, length, base + PAGE + body - -(-max(nbytes, 1) // alignment) * alignment


def capacity_from_env() -> int:
    """`$OPGEN_EMULATE_CUDA_MEMORY` bytes (suffixes K, M, G allowed), default 8 GiB."""
    text = os.environ.get(CAPACITY_VAR, "").strip().upper()
    if not text:
        return DEFAULT_CAPACITY
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1], 1)
    digits = text[:-1] if text[-1] in "KMG" else text
    try:
        value = int(digits) * scale
    except ValueError:
        raise ValueError(f"{CAPACITY_VAR}={os.environ[CAPACITY_VAR]!r}: expected a byte count such as 4G") from None
    if value <= 0:
        raise ValueError(f"{CAPACITY_VAR} must be positive, got {value}")
    return value


PERIOD = 2 << 20
TAIL = 16 << 20
_repeat = [False]


@contextlib.contextmanager
def repeated_pages() -> Iterator[None]:
    """Raw blocks of at least 4 * PERIOD + TAIL bytes made inside are repeated pages (Note [Repeated pages])."""
    previous, _repeat[0] = _repeat[0], True
    try:
        yield
    finally:
        _repeat[0] = previous


def _map_repeated(base: int, addr: int, nbytes: int) -> None:
    """Maps one PERIOD-byte memory file over [addr, addr + nbytes - TAIL) (page-aligned addr)."""
    fd = os.memfd_create("opgen-repeated")
    try:
        os.ftruncate(fd, PERIOD)
        end = addr + (nbytes - TAIL) // PERIOD * PERIOD
        for at in range(addr, end, PERIOD):
            got = _libc.mmap(at, PERIOD, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED | _MAP_FIXED, fd, 0)
            if got != at:
                raise MemoryError(f"cannot map repeated pages at {at:#x} (errno {ctypes.get_errno()})")
    finally:
        os.close(fd)


class HostBackedDevice(SimulatedDevice):
    """The raw memory of the emulated device (`SimulatedDevice` accounting, real bytes)."""

    def __init__(self, capacity: int, device_index: int = 0, current_stream: object = None) -> None:
        super().__init__(capacity, device_index)
        self._mappings: dict[int, tuple[int, int]] = {}  # block address -> (mapping base, length)
        self._stream_of = current_stream  # a callable giving the current stream's handle

    def _place(self, nbytes: int) -> int:
        """Host memory behind the new block's address (SimulatedDevice.malloc checks room and counts)."""
        base, length, addr = map_guarded(nbytes, self.ALIGNMENT)
        if _repeat[0] and nbytes >= 4 * PERIOD + TAIL and addr % PAGE == 0:
            _map_repeated(base, addr, nbytes)
        if nbytes <= POISON_LIMIT:
            ctypes.memset(addr, 0xFF, nbytes)
        self._mappings[addr] = (base, length)
        return addr

    def free(self, ptr: int) -> None:
        super().free(ptr)
        with self._lock:
            base, length = self._mappings.pop(ptr)
        _libc.munmap(base, length)

    def owns(self, ptr: int, nbytes: int) -> bool:
        """Whether [ptr, ptr + nbytes) lies inside one live raw allocation."""
        with self._lock:
            return any(a <= ptr and ptr + nbytes <= a + n for a, n in self.live.items())

    def current_stream(self) -> int:
        return int(self._stream_of()) if self._stream_of is not None else super().current_stream()

    def record_event(self, stream: int) -> int:
        event = super().record_event(stream)
        self.complete(event)  # the work before it already ran
        return event
