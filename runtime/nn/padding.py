"""Padding layers: Reflection-, Replication-, Zero-, Constant- and CircularPad in 1, 2 and 3 dims. `padding` is
an int (every side) or a tuple of 2 * dims amounts in F.pad's order (last dim's left, right, then the one before)."""

from __future__ import annotations

from typing import Any

import runtime.nn.functional as F
from runtime.nn.module import Module
from runtime.tensor import Tensor


class _PadNd(Module):
    nd = 1
    mode = "constant"

    def __init__(self, padding: Any, value: float = 0.0) -> None:
        super().__init__()
        if isinstance(padding, int):
            self.padding: tuple[int, ...] = (padding,) * (2 * self.nd)
        else:
            self.padding = tuple(int(p) for p in padding)
            if len(self.padding) != 2 * self.nd:
                raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple of {2 * self.nd} ints, "
                                 f"got {len(self.padding)}")
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        if self.mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        if self.mode == "constant" and not isinstance(self, (ZeroPad1d, ZeroPad2d, ZeroPad3d)):
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pad the last dim with the input reflected at its edges (edge not repeated); `padding` is an int or (left,
    right)."""
    nd, mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last 2 dims with the input reflected at its edges (edge not repeated); `padding` is an int or (left,
    right, top, bottom)."""
    nd, mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Pad the last 3 dims with the input reflected at its edges (edge not repeated); `padding` is an int or (left,
    right, top, bottom, front, back)."""
    nd, mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating the edge values; `padding` is an int or (left, right)."""
    nd, mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last 2 dims by repeating the edge values; `padding` is an int or (left, right, top, bottom)."""
    nd, mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Pad the last 3 dims by repeating the edge values; `padding` is an int or (left, right, top, bottom, front,
    back)."""
    nd, mode = 3, "replicate"


class CircularPad1d(_PadNd):
    """Pad the last dim by wrapping around (values from the opposite end); `padding` is an int or (left, right)."""
    nd, mode = 1, "circular"


class CircularPad2d(_PadNd):
    """Pad the last 2 dims by wrapping around (values from the opposite end); `padding` is an int or (left, right,
    top, bottom)."""
    nd, mode = 2, "circular"


class CircularPad3d(_PadNd):
    """Pad the last 3 dims by wrapping around (values from the opposite end); `padding` is an int or (left, right,
    top, bottom, front, back)."""
    nd, mode = 3, "circular"


class ZeroPad1d(_PadNd):
    """Pad the last dim with zeros; `padding` is an int or (left, right)."""
    nd = 1

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)


class ZeroPad2d(_PadNd):
    """Pad the last 2 dims with zeros; `padding` is an int or (left, right, top, bottom)."""
    nd = 2

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)


class ZeroPad3d(_PadNd):
    """Pad the last 3 dims with zeros; `padding` is an int or (left, right, top, bottom, front, back)."""
    nd = 3

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)


class ConstantPad1d(_PadNd):
    """Pad the last dim with `value`; `padding` is an int or (left, right)."""
    nd = 1

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding, value)


class ConstantPad2d(_PadNd):
    """Pad the last 2 dims with `value`; `padding` is an int or (left, right, top, bottom)."""
    nd = 2

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding, value)


class ConstantPad3d(_PadNd):
    """Pad the last 3 dims with `value`; `padding` is an int or (left, right, top, bottom, front, back)."""
    nd = 3

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding, value)
