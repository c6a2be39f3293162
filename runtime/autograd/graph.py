"""`G.autograd.graph`: the graph's Node type and hooks on the tensors nodes save (torch.autograd.graph)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import runtime.autograd.saved as saved
from runtime.autograd.node import Node

Tensor = Any


class saved_tensors_hooks:
    """Within the block, every tensor a backward node saves is kept as `pack_hook(tensor)` and given back as
    `unpack_hook(packed)` when backward needs it (Note [Saved tensor hooks], saved.py)."""

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        saved.saved_hooks.stack.append((self.pack_hook, self.unpack_hook))
        saved._hooks_in_use[0] += 1
        return self

    def __exit__(self, *exc: object) -> None:
        saved.saved_hooks.stack.pop()
        saved._hooks_in_use[0] -= 1


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are moved to the CPU when saved and back to their device when backward uses them
    (for CPU tensors, a copy is kept). `pin_memory` is accepted (opgen needs no pinned buffers)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t: Tensor) -> tuple[Any, Tensor]:
            return (t.device, t.detach().to("cpu", copy=True))

        def unpack(packed: tuple[Any, Tensor]) -> Tensor:
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Within the block, saving a tensor while saved_tensors_hooks are active raises `error_message`."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        self._previous = saved.saved_hooks.disabled
        saved.saved_hooks.disabled = self.error_message

    def __exit__(self, *exc: object) -> None:
        saved.saved_hooks.disabled = self._previous


def increment_version(tensor: Tensor) -> None:
    """Mark `tensor` as modified in place (what an in-place op does to its version counter)."""
    tensor._bump_version()


__all__ = ["Node", "increment_version", "disable_saved_tensors_hooks", "save_on_cpu", "saved_tensors_hooks"]
