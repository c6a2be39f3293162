"""SavedVariable: a tensor a backward node keeps for its formula, checked against in-place changes.

Note [Saved tensor version check]
Every tensor viewing one storage shares the storage's version counter, which each in-place op
increments. A SavedVariable records the version when it is saved; `unpack` compares, and a mismatch
means the formula would read changed values, which PyTorch reports as below (and so do we). Outputs are
saved without their grad_fn (Note [Saved tensors and reference cycles], node.py).
"""

from __future__ import annotations

import threading
from typing import Any

from runtime.autograd.grad_mode import is_grad_enabled
from runtime.dispatcher import AUTOGRAD_BIT

Tensor = Any


# Note [Saved tensor hooks]
# `G.autograd.graph.saved_tensors_hooks(pack, unpack)` (graph.py) pushes a pair on this thread's stack; while
# a pair is on it, every SavedVariable made (by any node: they are all made here) keeps `pack(tensor)`
# instead of the tensor, and `unpack` returns `unpack(packed)`. The version check does not apply to a
# packed tensor (the hook owns what it keeps). `_hooks_in_use` counts pairs pushed on any thread, so
# saving costs one global read when no hooks are in use.
class _HookStack(threading.local):
    def __init__(self) -> None:
        self.stack: list[tuple[Any, Any]] = []
        self.disabled: str | None = None


saved_hooks = _HookStack()
_hooks_in_use = [0]
_PACKED = object()  # `_data` of a SavedVariable whose tensor a pack hook holds

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph "
    "a second time or if you need to access saved tensors after calling backward.")


class SavedVariable:
    """A tensor saved for backward (None is allowed: an absent optional argument)."""

    __slots__ = ("_data", "_version", "_is_output", "_output_nr", "_grad_fn", "_requires_grad", "_released",
                 "_packed", "_unpack_hook")

    def __init__(self, tensor: Tensor | None, is_output: bool = False) -> None:
        self._released = False
        self._is_output = is_output
        if tensor is None:
            self._data = None
            self._version = 0
            self._output_nr = 0
            self._grad_fn = None
            self._requires_grad = False
            return
        self._version = tensor._storage_version()
        self._output_nr = tensor._output_nr
        self._requires_grad = tensor._requires_grad
        if _hooks_in_use[0] and saved_hooks.stack:
            self._pack(tensor, is_output)
            return
        if is_output:
            # Without grad_fn (no cycle); unpack(node) re-attaches node as the grad_fn.
            self._data = tensor.detach()
            self._grad_fn = None
        else:
            self._data = tensor
            self._grad_fn = tensor._grad_fn

    def _pack(self, tensor: Tensor, is_output: bool) -> None:
        """Keep `pack(tensor)` (Note [Saved tensor hooks])."""
        if saved_hooks.disabled is not None:
            raise RuntimeError(saved_hooks.disabled)
        pack, unpack = saved_hooks.stack[-1]
        self._grad_fn = None if is_output else tensor._grad_fn
        self._packed = pack(tensor.detach() if is_output else tensor)
        self._unpack_hook = unpack
        self._data = _PACKED

    def unpack(self, node: Any = None) -> Tensor | None:
        """The saved tensor; raises if it was freed or modified in place since it was saved."""
        data = self._data
        if data is None:
            if self._released:
                raise RuntimeError(ERR_BACKWARD_TWICE)
            return None
        if data is _PACKED:
            data = self._unpack_hook(self._packed)
            if not hasattr(data, "_storage_version"):
                raise TypeError(f"the unpack hook of saved_tensors_hooks must return a Tensor, not "
                                f"{type(data).__name__}")
        else:
            version = data._storage_version()
            if version != self._version:
                raise RuntimeError(self._modified_message(data, version, node))
        if not self._is_output or not self._requires_grad or node is None:
            return data
        if not is_grad_enabled():
            return data  # the formula will not be differentiated: no need for history
        # A new tensor object each time: the saved data stays free of the grad_fn (no cycle).
        t = data.detach()
        t._grad_fn = node
        t._output_nr = self._output_nr
        t._requires_grad = True
        t._keys |= AUTOGRAD_BIT
        return t

    def _modified_message(self, data: Tensor, version: int, node: Any) -> str:
        shape = list(data.shape)
        what = f"[{data.dtype!r} {shape}]"
        if self._is_output and node is not None:
            what += f", which is output {self._output_nr} of {node.name()},"
        elif self._grad_fn is not None:
            what += f", which is output {self._output_nr} of {self._grad_fn.name()},"
        return ("one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: {what} is at version {version}; expected version {self._version} instead. "
                "Hint: the operation that failed was the backward of the op that saved it; find the "
                "in-place op that changed this tensor after it was saved and make it out-of-place "
                "(or .clone() the tensor first).")

    def release(self) -> None:
        self._data = None
        self._packed = None
        self._grad_fn = None
        self._released = True

    @property
    def was_released(self) -> bool:
        return self._released
