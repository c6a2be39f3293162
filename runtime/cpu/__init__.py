"""`G.cpu`: PyTorch's torch.cpu device module for the host: always available, one device, no streams to wait
for; `G.cpu.amp` holds the CPU spellings of autocast and GradScaler."""

from __future__ import annotations

from typing import Any

from runtime.cpu import amp


def is_available() -> bool:
    """The CPU is always available."""
    return True


def device_count() -> int:
    """One CPU device."""
    return 1


def current_device() -> str:
    return "cpu"


def set_device(device: Any) -> None:
    """Accepted and ignored, as PyTorch's: there is one CPU device."""


def synchronize(device: Any = None) -> None:
    """Nothing to wait for: CPU kernels finish before they return."""


def is_initialized() -> bool:
    return True


__all__ = ["amp", "current_device", "device_count", "is_available", "is_initialized", "set_device", "synchronize"]
