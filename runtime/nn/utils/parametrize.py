"""`nn.utils.parametrize`: a tensor of a module computed from other tensors on every access (torch's).

`register_parametrization(module, "weight", P)` moves `module.weight` to
`module.parametrizations.weight.original` (through `P.right_inverse` when P has one; a tuple result becomes
`original0`, `original1`, ...) and makes `weight` a property of the module's class that returns
`P(original)` (a chain of parametrizations applies in registration order). To hold that property without
touching the module's own class, the module is moved to a subclass made for it, `Parametrized<Name>`;
`remove_parametrizations` puts the tensor back as a plain parameter (its current value, or the original)
and the module back into its class once no parametrization is left. Assigning `module.weight = X` stores
`right_inverse(X)`. Inside `with cached():` each parametrized tensor is computed once.
The Parameter objects stay the same throughout, so an optimizer built before keeps working.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from runtime.autograd.grad_mode import no_grad
from runtime.nn.containers import ModuleDict, ModuleList
from runtime.nn.module import Module, _replace_data
from runtime.nn.parameter import Parameter
from runtime.tensor import Tensor

_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Compute each parametrized tensor once inside the block (for a forward pass that reads it often)."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _set_original(slot: Tensor, value: Tensor) -> None:
    """Give the existing tensor `slot` the values (and shape) of `value`, keeping its identity."""
    with no_grad():
        if tuple(slot.shape) == tuple(value.shape) and slot.dtype is value.dtype:
            slot.copy_(value)
        else:
            _replace_data(slot, value.detach().clone())


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, and the tensor(s) they start from (`original` or `original{i}`)."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        new: Any = original
        with no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype is not new.dtype:
                raise ValueError(f"When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            _set_original(original, new)
            self._register("original", original)
        else:
            for i, t in enumerate(new):
                if not isinstance(t, Tensor):
                    raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors "
                                     f"(list, tuple...). Got element {i} of type {type(t).__name__}")
                slot = Parameter(t.detach().clone(), original.requires_grad) if isinstance(original, Parameter) \
                    else t.detach().clone()
                self._register(f"original{i}", slot)

    def _register(self, name: str, t: Tensor) -> None:
        if isinstance(t, Parameter):
            self.register_parameter(name, t)
        else:
            self.register_buffer(name, t)

    def right_inverse(self, value: Tensor) -> None:
        """Store `value` as the tensor these parametrizations should produce."""
        with no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                elif not self.unsafe:
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement "
                                       "right_inverse.")
            if self.is_tensor:
                _set_original(self.original, value)
            else:
                for i, t in enumerate(value):
                    _set_original(getattr(self, f"original{i}"), t)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def type_before_parametrizations(module: Module) -> type:
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def _inject_new_class(module: Module) -> None:
    cls = type(module)
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {"__module__": cls.__module__})


def _inject_property(module: Module, tensor_name: str) -> None:
    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            key = (id(self), tensor_name)
            if key not in _cache:
                _cache[key] = parametrization()
            return _cache[key]
        return parametrization()

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(type(module), tensor_name, property(get_parametrized, set_original))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make `module.<tensor_name>` be `parametrization(original)` from now on (see the module docstring)."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            current = getattr(module, tensor_name)
            out = parametrization(current)
            if not isinstance(out, Tensor) or tuple(out.shape) != tuple(current.shape):
                raise ValueError("Registering a parametrization may not change the shape of the tensor, unless "
                                 "`unsafe` flag is enabled.")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module._get_name()}' does not have a parameter, a buffer, or a parametrized "
                         f"element with name '{tensor_name}'")
    return module


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Turn `module.<tensor_name>` back into a plain parameter (or buffer): its current value when
    leave_parametrized, else the original it was computed from."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module._get_name()} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
            _set_original(original, value)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                             "parametrized in terms of a sequence of tensors.")
        with no_grad():
            value = getattr(module, tensor_name)
        requires_grad = any(getattr(parametrizations, f"original{i}").requires_grad
                            for i in range(parametrizations.ntensors))
        original = Parameter(value.detach(), requires_grad) if requires_grad else value.detach()
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Register on `to_module` the parametrizations of `from_module` (all, or those of tensor_name), with
    copies of their original tensors."""
    if not is_parametrized(from_module):
        return to_module
    names = [tensor_name] if tensor_name is not None else list(from_module.parametrizations)
    for name in names:
        chain = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            to_module.register_parameter(name, Parameter(getattr(from_module, name).detach().clone()))
        for p in chain:
            register_parametrization(to_module, name, p)
        with no_grad():
            if chain.is_tensor:
                to_module.parametrizations[name].original.copy_(chain.original)
            else:
                for i in range(chain.ntensors):
                    getattr(to_module.parametrizations[name], f"original{i}").copy_(getattr(chain, f"original{i}"))
    return to_module


__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "transfer_parametrizations_and_params", "type_before_parametrizations"]
