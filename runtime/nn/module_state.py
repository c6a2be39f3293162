"""Module.state_dict / load_state_dict as PyTorch builds them: per module, through overridable steps and hooks.

`state_dict()` walks the module tree: each module runs its state-dict pre-hooks, `_save_to_state_dict`
(its parameters, persistent buffers and `get_extra_state()`), its children under `prefix + name + "."`,
then its state-dict hooks (a hook's non-None result replaces the dict). The dict carries `_metadata`
(each module's `version` by prefix), which `load_state_dict` hands back to `_load_from_state_dict`.

Note [Loading is all or nothing]
PyTorch copies each value as it goes and raises at the end, leaving a half-loaded model behind when a key
is missing or a shape differs. Here the base `_load_from_state_dict` checks every value and records the
copy; `load_state_dict` performs the recorded copies only when no module reported an error (and, with
strict, no key is missing or unexpected). Called on its own, outside a load, `_load_from_state_dict`
copies at once.
"""

from __future__ import annotations

import contextvars
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from runtime.autograd.grad_mode import no_grad
from runtime.autograd.node import RemovableHandle
from runtime.nn.hooks import add_hook
from runtime.nn.init import copy_into
from runtime.nn.parameter import Parameter
from runtime.nn.tensor_data import convert_tensor
from runtime.tensor import Tensor

Module = Any  # the class this mixes into (runtime/nn/module.py imports this module)

EXTRA_STATE = "_extra_state"
# The copies a running load_state_dict has recorded (Note [Loading is all or nothing]); None outside a load.
_PENDING: contextvars.ContextVar[list[Callable[[], None]] | None] = contextvars.ContextVar("pending", default=None)


class IncompatibleKeys(NamedTuple):
    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"

    __str__ = __repr__


def _hooks(module: Module, table: str) -> list[Any]:
    return module.__dict__.setdefault(table, [])


class StateDictMixin:
    """The state-dict half of Module (mixed into it; see the module docstring)."""

    _version: int = 1

    # -- extra state -------------------------------------------------------------------------------------
    def get_extra_state(self) -> Any:
        """Override to return extra state for state_dict; a module that does not override it saves none (this base
        raises RuntimeError)."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state: Any) -> None:
        """Override to restore, at load_state_dict, what get_extra_state returned (this base raises RuntimeError)."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    def _has_extra_state(self) -> bool:
        return type(self).get_extra_state is not StateDictMixin.get_extra_state

    # -- hooks -----------------------------------------------------------------------------------------------
    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata)` after the module's entries are written."""
        return add_hook(_hooks(self, "_state_dict_hooks"), hook, False, False)  # type: ignore[arg-type]

    register_state_dict_post_hook = _register_state_dict_hook

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(module, prefix, keep_vars)` before the module's entries are written."""
        return add_hook(_hooks(self, "_state_dict_pre_hooks"), hook, False, False)  # type: ignore[arg-type]

    def _register_load_state_dict_pre_hook(self, hook: Callable[..., Any],
                                           with_module: bool = False) -> RemovableHandle:
        entry = (lambda *a: hook(self, *a)) if with_module else hook
        return add_hook(_hooks(self, "_load_state_dict_pre_hooks"), entry, False, False)  # type: ignore[arg-type]

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)`
        before the module reads its entries (it may edit `state_dict`)."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(module, incompatible_keys)` after loading; it may edit the two lists in place."""
        return add_hook(_hooks(self, "_load_state_dict_post_hooks"), hook, False, False)  # type: ignore[arg-type]

    # -- saving ----------------------------------------------------------------------------------------------
    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str, keep_vars: bool) -> None:
        skip = self.__dict__.get("_non_persistent", ())
        for name, p in self._parameters.items():  # type: ignore[attr-defined]
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():  # type: ignore[attr-defined]
            if b is not None and name not in skip:
                destination[prefix + name] = b if keep_vars else b.detach()
        if self._has_extra_state():
            destination[prefix + EXTRA_STATE] = self.get_extra_state()

    def state_dict(self, *args: Any, destination: dict[str, Any] | None = None, prefix: str = "",
                   keep_vars: bool = False) -> Any:
        """Every parameter and persistent buffer by dotted name (detached unless keep_vars), in an OrderedDict
        with `_metadata`."""
        if args:  # the deprecated positional form state_dict(destination, prefix, keep_vars)
            destination = args[0] if destination is None else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        local_metadata = {"version": self._version}
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = local_metadata
        for hook in self.__dict__.get("_state_dict_pre_hooks", ()):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, child in self._modules.items():  # type: ignore[attr-defined]
            if child is not None:
                child.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self.__dict__.get("_state_dict_hooks", ()):
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    # -- loading ---------------------------------------------------------------------------------------------
    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str, local_metadata: dict[str, Any],
                              strict: bool, missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        """Read this module's own entries (not its children's) from `state_dict`; report what is wrong."""
        for hook in self.__dict__.get("_load_state_dict_pre_hooks", ()):
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        skip = self.__dict__.get("_non_persistent", ())
        local: dict[str, tuple[str, Tensor]] = {}
        for name, p in self._parameters.items():  # type: ignore[attr-defined]
            if p is not None:
                local[name] = ("_parameters", p)
        for name, b in self._buffers.items():  # type: ignore[attr-defined]
            if b is not None and name not in skip:
                local[name] = ("_buffers", b)
        assign = bool(local_metadata.get("assign_to_params_buffers", False))
        for name, (table, target) in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected a Tensor from the '
                                  f"checkpoint but received {type(value).__name__}")
                continue
            if tuple(value.shape) != tuple(target.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {list(value.shape)} from "
                                  f"checkpoint, the shape in current model is {list(target.shape)}.")
                continue
            self._record(_copy_action(self, table, name, target, value, assign))
        extra_key = prefix + EXTRA_STATE
        if self._has_extra_state():
            if extra_key in state_dict:
                self._record(lambda v=state_dict[extra_key]: self.set_extra_state(v))
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    head = key[len(prefix):].split(".", 1)[0]
                    if head not in self._modules and head not in local:  # type: ignore[attr-defined]
                        unexpected_keys.append(key)

    @staticmethod
    def _record(action: Callable[[], None]) -> None:
        pending = _PENDING.get()
        if pending is None:
            action()
        else:
            pending.append(action)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> IncompatibleKeys:
        """Copy `state_dict`'s values into this module's tensors (same names, same shapes); all or nothing
        (Note [Loading is all or nothing])."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict).__name__}.")
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        visited: list[Any] = []

        def load(module: Any, local_state: dict[str, Any], prefix: str) -> None:
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = True
            module._load_from_state_dict(local_state, prefix, local_metadata, True, missing, unexpected, errors)
            visited.append(module)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state.items() if k.startswith(child_prefix)}, child_prefix)

        pending: list[Callable[[], None]] = []
        token = _PENDING.set(pending)
        try:
            load(self, state_dict, "")
        finally:
            _PENDING.reset(token)
        keys = IncompatibleKeys(missing, unexpected)
        for module in reversed(visited):
            for hook in module.__dict__.get("_load_state_dict_post_hooks", ()):
                if hook(module, keys) is not None:
                    raise RuntimeError("load_state_dict post hooks must return None (edit incompatible_keys "
                                       "in place instead)")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected)
                              + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors))
        for action in pending:
            action()
        return keys


def _copy_action(module: Any, table: str, name: str, target: Tensor, value: Tensor,
                 assign: bool) -> Callable[[], None]:
    def run() -> None:
        if not assign:
            copy_into(target, convert_tensor(value, target.device, target.dtype))
            return
        if table == "_parameters":
            new = value if isinstance(value, Parameter) else Parameter(value, requires_grad=target.requires_grad)
            with no_grad():
                module._parameters[name] = new
        else:
            module._buffers[name] = value
    return run
