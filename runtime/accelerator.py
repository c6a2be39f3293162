"""`G.accelerator`: the device-independent view of the accelerator (for opgen, CUDA when a device exists)."""

from __future__ import annotations

from typing import Any

from runtime import cuda
from runtime.device import Device


def is_available() -> bool:
    """True when a CUDA device (a GPU, or the emulated one) can run opgen's kernels."""
    return cuda.is_available()


def current_accelerator(check_available: bool = False) -> Device | None:
    """`device('cuda')` where a CUDA device can run opgen's kernels; None otherwise (also with
    `check_available`: opgen has no accelerator that is built but absent)."""
    return Device("cuda") if cuda.is_available() else None


def device_count() -> int:
    return cuda.device_count() if cuda.is_available() else 0


def current_device_index() -> int:
    return cuda.current_device()


def set_device_index(device: Any) -> None:
    cuda.set_device(_index(device))


def synchronize(device: Any = None) -> None:
    cuda.synchronize(None if device is None else _index(device))


def _index(device: Any) -> int:
    if isinstance(device, int):
        return device
    d = Device(device) if not isinstance(device, Device) else device
    if d.type != "cuda":
        raise ValueError(f"{d} is not an accelerator device (opgen's accelerator is 'cuda')")
    return d.index or 0


class device_index:
    """Context manager: run the block with `device` as the current accelerator device (None: unchanged)."""

    def __init__(self, device: Any) -> None:
        self.index = None if device is None else _index(device)
        self._previous: int | None = None

    def __enter__(self) -> None:
        if self.index is not None:
            self._previous = cuda.current_device()
            cuda.set_device(self.index)

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            cuda.set_device(self._previous)


current_device_idx = current_device_index
set_device_idx = set_device_index

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "device_count", "device_index",
           "is_available", "set_device_idx", "set_device_index", "synchronize"]
