"""Storage: one allocation that tensors view, with the version counter autograd checks."""

from __future__ import annotations

from collections.abc import Sequence
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
        """The address of the storage's first byte (host memory for CPU, device memory for CUDA)."""
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


# Note [Impossible allocation sizes]
# An allocation that cannot succeed raises PyTorch's RuntimeError naming the size in bytes and the device,
# never NumPy's ValueError/MemoryError or CuPy's errors from deep inside the array library: a byte count past
# what an int64 holds is PyTorch's "Storage size calculation overflowed", a byte count the allocator cannot
# satisfy is "<allocator>: can't allocate memory". `empty_array` is where CPU and CUDA factory memory is
# allocated (empty_strided); the CUDA caching allocator path (runtime/cuda/fixed.empty) sizes its
# requests with `checked_nbytes`. Sizes are multiplied as Python ints, which do not wrap around.
MAX_NBYTES = (1 << 63) - 1
# the most dimensions of a NumPy (and CuPy) array: 64 since NumPy 2.0, 32 before
MAX_DIMS = 64 if int(np.__version__.split(".")[0]) >= 2 else 32


def checked_nbytes(shape: Sequence[int], itemsize: int, device: object) -> int:
    """The bytes of a contiguous array of `shape`; RuntimeError if that does not fit in an int64."""
    nbytes = itemsize
    for n in shape:
        nbytes *= n
    if nbytes > MAX_NBYTES:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}: {nbytes} bytes "
                           f"on device {device}")
    return nbytes


def empty_array(xp: Any, shape: tuple[int, ...], np_dtype: Any, device: object) -> Any:
    """`xp.empty(shape, np_dtype)` with Note [Impossible allocation sizes]: the error names bytes and device."""
    if len(shape) > MAX_DIMS:
        raise RuntimeError(f"a tensor of {len(shape)} dimensions was requested: opgen tensors have at most "
                           f"{MAX_DIMS} (NumPy's limit)")
    try:
        return xp.empty(shape, dtype=np_dtype)
    except (MemoryError, ValueError, OverflowError):  # the sizes are checked non-negative ints before
        nbytes = checked_nbytes(shape, np.dtype(np_dtype).itemsize, device)
        if nbytes == 0:
            raise RuntimeError(f"cannot allocate an empty tensor of sizes {list(shape)} on device {device}: the "
                               f"product of its non-zero sizes overflows") from None
        allocator = "DefaultCPUAllocator" if xp is np else "CUDA allocator"
        raise RuntimeError(f"{allocator}: not enough memory: you tried to allocate {nbytes} bytes on device "
                           f"{device}.") from None
