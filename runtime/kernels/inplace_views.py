"""In-place view ops: `t.t_()`, `transpose_`, `squeeze_`, `unsqueeze_`, `as_strided_`, `swapaxes_`,
`swapdims_` change the tensor's own geometry (sizes, strides, offset) over the same storage.

Note [In-place view ops]
The op's view form is called first, through the dispatcher, so its geometry checks, its errors and (when
autograd records) its backward node are the view op's own. The tensor then takes the view's array (its
geometry over the same memory: Note [Tensor data is a strided array view]) and, when a node was recorded,
that node as its grad_fn: the node's edge points at the tensor's previous history, as PyTorch's
`TBackward`/`SqueezeBackward` of `x.t_()` does. A leaf that requires grad is refused while grad mode
records (PyTorch's message); under no_grad its geometry changes as any tensor's. A view (`_base`) stays a
view of the same base: its place in the base is read from its geometry whenever an in-place op rebases it
(runtime/autograd/copy_slices.py), so the new geometry is the one used. The generated binding bumps the
version counter before the kernel runs, as for every op with a `Tensor(a!) self`. No memory is touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runtime import opcall


def _adopt(self: Any, view: Any) -> Any:
    """`self` takes the geometry (and recorded history) of `view`, a view of it; returns self."""
    node = view._grad_fn
    if node is not None:
        if self._grad_fn is None:  # a leaf: its gradient would be lost
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        self._grad_fn = node
        self._output_nr = view._output_nr
    self._data = view._data
    return self


def t_(self: Any) -> Any:
    if self.dim() > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return _adopt(self, opcall.ops.t(self))


def transpose_(self: Any, dim0: int, dim1: int) -> Any:
    return _adopt(self, opcall.ops.transpose(self, dim0, dim1))


def swapaxes_(self: Any, axis0: int, axis1: int) -> Any:
    return _adopt(self, opcall.ops.transpose(self, axis0, axis1))


def squeeze_(self: Any, dim: int | Sequence[int] | None = None) -> Any:
    if dim is None:
        return _adopt(self, opcall.ops.squeeze(self))
    return _adopt(self, opcall.ops.squeeze(self, dim))


def unsqueeze_(self: Any, dim: int) -> Any:
    return _adopt(self, opcall.ops.unsqueeze(self, dim))


def as_strided_(self: Any, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None) -> Any:
    return _adopt(self, opcall.ops.as_strided(self, size, stride, storage_offset))
