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
"""

from __future__ import annotations

import ctypes
import mmap
import os

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


class HostBackedDevice(SimulatedDevice):
    """The raw memory of the emulated device (`SimulatedDevice` accounting, real bytes)."""

    def __init__(self, capacity: int, device_index: int = 0, current_stream: object = None) -> None:
        super().__init__(capacity, device_index)
        self._mappings: dict[int, tuple[int, int]] = {}  # block address -> (mapping base, length)
        self._stream_of = current_stream  # a callable giving the current stream's handle

    def _place(self, nbytes: int) -> int:
        """Host memory behind the new block's address (SimulatedDevice.malloc checks room and counts)."""
        base, length, addr = map_guarded(nbytes, self.ALIGNMENT)
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
