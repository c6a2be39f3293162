"""`G.nn.Parameter`: a Tensor that a Module registers as one of its parameters.

A Parameter is a real `Tensor` (a subclass adding no fields), so every op, the dispatcher and the
autograd engine treat it as a plain leaf tensor; `isinstance(p, G.Tensor)` holds. It shares the data
and storage of the tensor it was made from, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from runtime.tensor import Tensor

_SLOTS = tuple(name for name in Tensor.__slots__ if name not in ("__dict__", "__weakref__"))


def _copy_fields(dst: Tensor, src: Tensor) -> None:
    """Make `dst` a shallow copy of `src`: every slot that is set, and the instance dict if there is one."""
    for name in _SLOTS:
        try:
            value = getattr(src, name)
        except AttributeError:
            continue
        object.__setattr__(dst, name, value)
    fields = getattr(src, "__dict__", None)
    if fields:
        dst.__dict__.update(fields)


class Parameter(Tensor):
    """A leaf tensor that requires grad by default; assigning one to a Module attribute registers it."""

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            from runtime.factories import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter data must be a Tensor, not {type(data).__name__}")
        source = data.detach()
        p = object.__new__(cls)
        _copy_fields(p, source)
        p.requires_grad_(requires_grad)
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass  # everything is done in __new__ (Tensor.__init__ refuses direct construction)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        """A new Parameter with copied data (and grad), same requires_grad: what copy.deepcopy(module) needs."""
        if id(self) in memo:
            return memo[id(self)]
        import copy

        from runtime.autograd.grad_mode import no_grad
        with no_grad():
            result = Parameter(self.detach().clone(), self.requires_grad)
            if self.grad is not None:
                result.grad = self.grad.detach().clone()
        fields = getattr(self, "__dict__", None)
        if fields:
            result.__dict__.update(copy.deepcopy(fields, memo))
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError("Parameters are saved through state_dict(): use G.save(module.state_dict(), path)")


class Buffer:
    """`nn.Buffer(tensor, persistent=True)`: assigned to a Module attribute, registers `tensor` as a buffer
    (the attribute then holds the tensor itself, as PyTorch's)."""

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        if data is None:
            from runtime.factories import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer data must be a Tensor, not {type(data).__name__}")
        self.data = data
        self.persistent = persistent
