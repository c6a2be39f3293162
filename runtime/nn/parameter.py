"""`G.nn.Parameter`: a Tensor that a Module registers as one of its parameters.

A Parameter is a real `Tensor` (a subclass adding no fields), so every op, the dispatcher and the
autograd engine treat it as a plain leaf tensor; `isinstance(p, G.Tensor)` holds. It shares the data
and storage of the tensor it was made from, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from runtime import opcall
from runtime.nn.tensor_data import _replace_data
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
        # the user's attributes only: the tensor's own fields kept in its dict (its Storage, its grad, the
        # AccumulateGrad edge of the leaf: Note [Lean tensor construction]) belong to the original, and a
        # copy of them would make the new Parameter view the old memory or send its gradients to the old leaf
        fields = {k: v for k, v in getattr(self, "__dict__", {}).items() if not hasattr(Tensor, k)}
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


class UninitializedTensorMixin:
    """`materialize(shape, device=None, dtype=None)`: allocate (uninitialised) data and become the plain kind."""

    cls_to_become: type = Parameter

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Allocate uninitialised data of `shape` (on `device`, as `dtype`, else the current ones) in place and
        become cls_to_become."""
        G = opcall.api
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        new = G.empty(shape, device=device if device is not None else self.device,  # type: ignore[attr-defined]
                      dtype=dtype if dtype is not None else self.dtype)  # type: ignore[attr-defined]
        _replace_data(self, new)  # type: ignore[arg-type]
        self.__class__ = self.cls_to_become

    @property
    def shape(self) -> Any:
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                           "initialized one. Call `forward` to initialize the parameters before accessing their "
                           "attributes.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter with no data yet (lazy modules); materialize(shape) makes it a Parameter in place."""
    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> UninitializedParameter:
        G = opcall.api
        p = Parameter.__new__(cls, G.empty(0, device=device, dtype=dtype), requires_grad)
        return p  # type: ignore[return-value]

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer with no data yet (lazy modules); materialize(shape) makes it a Tensor in place."""
    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None) -> UninitializedBuffer:
        G = opcall.api
        b = object.__new__(cls)
        _copy_fields(b, G.empty(0, device=device, dtype=dtype))
        return b

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None) -> None:
        pass


def is_lazy(t: Any) -> bool:
    return isinstance(t, UninitializedTensorMixin)
