"""The Optimizer base: parameter groups, per-parameter state, zero_grad, state_dict / load_state_dict.

Subclasses implement `_update(group, params)`, which `step()` calls under `no_grad` once per group
with the group's parameters that have a gradient. Updates are written with in-place ops
(`p.add_(...)`, `buf.mul_(...)`), so they run through the dispatcher on whatever device the
parameters live on; SGD and Adam write their rule once over `runtime.optim.arith`, which also runs it on
the host arrays under the tensors (Note [One update rule, two kinds of operand]).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from runtime.autograd.grad_mode import no_grad
from runtime.autograd.node import RemovableHandle
from runtime.compile.step_capture import register_optimizer_base
from runtime.nn.init import zero_grad_in_place
from runtime.tensor import Tensor

ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]]


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


def new_step() -> Tensor:
    """A parameter's step counter: a 0-dim float32 CPU tensor, as PyTorch keeps it (see `advance_step`)."""
    from runtime.factories import tensor
    return tensor(0.0)


_HOST_FLOAT = (np.dtype(np.float32), np.dtype(np.float64))


def advance_step(state: dict[str, Any]) -> int:
    """Add one to state["step"] in place and return the new count.

    In place, as PyTorch: an optimizer loaded from another's state_dict shares the counter tensor with it
    (load_state_dict does not copy "step"), and a program that steps both sees PyTorch's numbers.
    """
    step = state["step"]
    if isinstance(step, Tensor):
        data = step._data
        if data.__class__ is np.ndarray and data.ndim == 0 and data.dtype in _HOST_FLOAT:
            np.add(data, 1, out=data)  # what step.add_(1) computes (Note [One update rule, two kinds of operand])
            step._bump_version()
            return int(data)
        with no_grad():
            step.add_(1)
        return int(step.item())
    state["step"] = step + 1
    return step + 1


def check_non_negative(name: str, value: float) -> None:
    """PyTorch's check of a hyper-parameter that must be >= 0 (`Invalid learning rate: -1`)."""
    if not value >= 0.0:
        raise ValueError(f"Invalid {name}: {value}")


def impl_flags(**flags: Any) -> dict[str, Any]:
    """PyTorch's implementation switches (`foreach`, `fused`, `capturable`, `differentiable`: the ones an
    optimizer has), kept in its param groups as PyTorch keeps them.

    opgen has one implementation of each update rule and it serves every setting of `foreach`, `fused` and
    `capturable` (in PyTorch they choose between kernels, not between results); `differentiable=True`, an
    update that autograd records, is refused.
    """
    unknown = set(flags) - {"foreach", "fused", "capturable", "differentiable"}
    if unknown:
        raise TypeError(f"unknown implementation flag(s): {sorted(unknown)}")
    if flags.get("differentiable"):
        raise NotImplementedError("differentiable=True (an optimizer step recorded by autograd) is not supported "
                                  "by opgen")
    if flags.get("foreach") and flags.get("fused"):
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    return dict(flags)


class Optimizer:
    """Holds `param_groups` (dicts with "params" and the hyper-parameters) and `state` (per parameter)."""

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        # a defaultdict, as PyTorch's: `opt.state[p]` of a parameter without state is an empty dict
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {type(params).__name__}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        self._step_pre_hooks: list[Callable[..., Any]] = []
        self._step_post_hooks: list[Callable[..., Any]] = []
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a dict of params (and options; missing ones from the defaults) as a new parameter group; a parameter
        may be in one group only."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        group = dict(param_group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        if group["params"] and all(isinstance(p, tuple) and len(p) == 2 for p in group["params"]):
            # named parameters, as model.named_parameters() gives them: PyTorch keeps the names in "param_names"
            group["param_names"] = [name for name, _ in group["params"]]
            group["params"] = [p for _, p in group["params"]]
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter "
                                 f"{name}")
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every optimized parameter: to None (`set_to_none=True`) or to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    zero_grad_in_place(p)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns closure() when one is given."""
        for hook in list(self._step_pre_hooks):
            result = hook(self, (), {})
            if result is not None:
                raise RuntimeError("optimizer step pre-hooks must return None here (argument replacement is not "
                                   "supported)")
        loss = self._step(closure)
        for hook in list(self._step_post_hooks):
            hook(self, (), {})
        return loss

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(optimizer, args, kwargs)` before every step()."""
        self._step_pre_hooks.append(hook)
        return RemovableHandle(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(optimizer, args, kwargs)` after every step()."""
        self._step_post_hooks.append(hook)
        return RemovableHandle(self._step_post_hooks, hook)

    def _step(self, closure: Callable[[], Any] | None) -> Any:
        loss = None
        if closure is not None:
            from runtime.autograd.grad_mode import enable_grad
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                if params:
                    self._update(group, params)
        return loss

    def _update(self, group: dict[str, Any], params: list[Tensor]) -> None:
        raise NotImplementedError

    # -- state ---------------------------------------------------------------------------------------
    # -- state-dict hooks (PyTorch's four kinds) ------------------------------------------------------
    def _state_hooks(self, kind: str) -> list[Callable[..., Any]]:
        return self.__dict__.setdefault(f"_{kind}_hooks", [])

    def _add_state_hook(self, kind: str, hook: Callable[..., Any], prepend: bool) -> RemovableHandle:
        hooks = self._state_hooks(kind)
        hooks.insert(0, hook) if prepend else hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """`hook(optimizer)` before state_dict() builds its result."""
        return self._add_state_hook("state_dict_pre", hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """`hook(optimizer, state_dict)` after; a non-None result replaces the state_dict."""
        return self._add_state_hook("state_dict_post", hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """`hook(optimizer, state_dict)` before loading; a non-None result is loaded instead."""
        return self._add_state_hook("load_state_dict_pre", hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """`hook(optimizer)` after loading."""
        return self._add_state_hook("load_state_dict_post", hook, prepend)

    def state_dict(self) -> dict[str, Any]:
        """{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}, as in PyTorch."""
        for hook in self._state_hooks("state_dict_pre"):
            hook(self)
        result = self._build_state_dict()
        for hook in self._state_hooks("state_dict_post"):
            new = hook(self, result)
            if new is not None:
                result = new
        return result

    def _build_state_dict(self) -> dict[str, Any]:
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            ids = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore the state and the group options from a state_dict() result (parameters matched by position),
        running the load hooks around it."""
        for hook in self._state_hooks("load_state_dict_pre"):
            new = hook(self, state_dict)
            if new is not None:
                state_dict = new
        self._load(state_dict)
        for hook in self._state_hooks("load_state_dict_post"):
            hook(self)

    def _load(self, state_dict: Mapping[str, Any]) -> None:
        groups = list(state_dict["param_groups"])
        if len(groups) != len(self.param_groups):
            raise ValueError(f"loaded state dict has {len(groups)} parameter groups, the optimizer has "
                             f"{len(self.param_groups)}")
        by_index: dict[int, Tensor] = {}
        for mine, saved in zip(self.param_groups, groups, strict=True):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                                 "optimizer's group")
            by_index.update(zip((int(i) for i in saved["params"]), mine["params"], strict=True))
        from runtime.nn.tensor_data import convert_tensor
        self.state = defaultdict(dict)
        for key, values in state_dict["state"].items():
            p = by_index[int(key)]
            # As PyTorch: a state tensor already on the parameter's device and dtype is taken as is, not
            # copied, so the loaded optimizer shares it with the state_dict's source until either replaces it.
            self.state[p] = {k: convert_tensor(v, p.device, p.dtype) if isinstance(v, Tensor) and k != "step"
                             else v for k, v in values.items()}
        for mine, saved in zip(self.param_groups, groups, strict=True):
            mine.update({k: (tuple(v) if isinstance(v, list) else v) for k, v in saved.items() if k != "params"})

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join([*lines, ")"])


# G.compile captures `Optimizer.step()` as one node of a training step (Note [Capturing a training step] in
# runtime/compile/step_capture.py); runtime.compile sits below runtime.optim, so the class is registered here.
register_optimizer_base(Optimizer)
