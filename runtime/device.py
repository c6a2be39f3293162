"""Devices: `device("cpu")`, `device("cuda")`, `device("cuda:1")`."""

from __future__ import annotations

from typing import Any

_TYPES = ("cpu", "cuda", "meta")


class Device:
    """A device type and index (index None means the current device of that type)."""

    __slots__ = ("type", "index")

    def __init__(self, spec: Any, index: int | None = None) -> None:
        if isinstance(spec, Device):
            self.type, self.index = spec.type, spec.index
            return
        if isinstance(spec, int) and not isinstance(spec, bool):
            spec, index = "cuda", spec
        if not isinstance(spec, str):
            raise TypeError(f"device must be a string like 'cpu' or 'cuda:0', not {type(spec).__name__}")
        kind, _, num = spec.partition(":")
        if kind not in _TYPES:
            raise RuntimeError(f"unknown device type '{kind}' in '{spec}'; expected one of: {', '.join(_TYPES)}")
        if num:
            if not num.isdigit() or index is not None:
                raise RuntimeError(f"invalid device string '{spec}'")
            index = int(num)
        if kind == "cpu" and index not in (None, 0):
            raise RuntimeError(f"CPU device index must be 0, got {index}")
        self.type = kind
        self.index = index if kind != "cpu" else None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = Device(other)
        return isinstance(other, Device) and self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"


device = Device
CPU = Device("cpu")
CUDA0 = Device("cuda", 0)
META = Device("meta")


def as_device(spec: Any) -> Device:
    """A Device from a Device, a string or a CUDA index; `cuda` means the current CUDA device."""
    if isinstance(spec, Device):
        d = spec
    else:
        d = Device(spec)
    if d.type == "cuda" and d.index is None:
        return Device("cuda", 0)
    return d


# Note [The default device]
# `G.set_default_device(d)` names the device that factories use when given no `device=` (process-wide, as
# PyTorch's torch.set_default_device is global to the thread that sets it; opgen keeps one for the process).
# runtime/factories.py resolves `device=None` through `default_device()`; the CPU fast paths apply only
# while it is the CPU.
_default_device: list[Device] = [CPU]


def set_default_device(device: Any) -> None:
    """Make `device` (None: the CPU) the device of tensors built without `device=`."""
    d = CPU if device is None else as_device(device)
    _default_device[0] = CPU if d == CPU else d


def get_default_device() -> Device:
    """The device of tensors built without `device=` (`cpu` unless set_default_device changed it)."""
    return _default_device[0]


def default_device() -> Device:
    return _default_device[0]
