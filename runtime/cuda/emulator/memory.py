"""Device memory of the emulated CUDA device: a SimulatedDevice whose addresses have host bytes behind them.

The caching allocator (runtime/cuda/allocator.py) sits on top exactly as on a GPU; only the raw layer
differs: a raw allocation is a host buffer aligned like cudaMalloc's, its address is the real address of
those bytes (so kernels on the host engine dereference device pointers directly), and fresh memory is
filled with 0xFF bytes (NaN in every float type, -1 in every integer type) so a kernel that reads memory it
never wrote shows garbage, as on a GPU. Work runs at launch, so every event is complete when recorded.
"""

from __future__ import annotations

import os

import numpy as np

from runtime.cuda.simulated import SimulatedDevice

DEFAULT_CAPACITY = 8 << 30
CAPACITY_VAR = "OPGEN_EMULATE_CUDA_MEMORY"


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
        self._buffers: dict[int, np.ndarray] = {}
        self._stream_of = current_stream  # a callable giving the current stream's handle

    def _place(self, nbytes: int) -> int:
        """A real host buffer behind the new block's address (SimulatedDevice.malloc checks room and counts)."""
        buffer = np.full(nbytes + self.ALIGNMENT, 0xFF, dtype=np.uint8)
        start = buffer.__array_interface__["data"][0]
        addr = -(-start // self.ALIGNMENT) * self.ALIGNMENT
        self._buffers[addr] = buffer
        return addr

    def free(self, ptr: int) -> None:
        super().free(ptr)
        with self._lock:
            del self._buffers[ptr]

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
