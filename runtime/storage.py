"""Storage: one allocation that tensors view, with the version counter autograd checks."""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime.device import Device

CPU_ALIGNMENT = 64  # bytes, as PyTorch's DefaultCPUAllocator (enough for AVX-512)


class Storage:
    """An allocation (`data`: a 1-D NumPy or CuPy array that owns or roots the memory) on a device.

    Every tensor viewing this memory shares one Storage, hence one `version`: an in-place write
    through any of them increments it, which is how autograd notices that a saved tensor changed.
    """

    __slots__ = ("data", "nbytes", "device", "version", "__weakref__")

    def __init__(self, data: Any, device: Device) -> None:
        self.data = data
        self.nbytes = int(data.nbytes)
        self.device = device
        self.version = 0

    def data_ptr(self) -> int:
        if isinstance(self.data, np.ndarray):
            return int(self.data.__array_interface__["data"][0])
        return int(self.data.data.ptr)

    def __repr__(self) -> str:
        return f"Storage(nbytes={self.nbytes}, device={self.device}, version={self.version})"


def cpu_alloc(nbytes: int) -> np.ndarray:
    """The CPU allocator: immediate, 64-byte aligned, returns a 1-D uint8 array of `nbytes`."""
    raw = np.empty(nbytes + CPU_ALIGNMENT, dtype=np.uint8)
    start = (-raw.__array_interface__["data"][0]) % CPU_ALIGNMENT
    return raw[start:start + nbytes]


def root_array(array: Any) -> Any:
    """The array at the root of a chain of NumPy/CuPy views (the one that holds the memory)."""
    root = array
    while getattr(root, "base", None) is not None and type(root.base) is type(array):
        root = root.base
    return root
