"""`G.nn.Module`: the base of layers, holding parameters, buffers and sub-modules by attribute name.

As in PyTorch, assigning a Parameter or a Module to an attribute registers it (`self.fc = Linear(...)`),
names are dotted paths (`"0.weight"`), and `state_dict()` / `load_state_dict()` map those names to
tensors. `load_state_dict` copies values into the existing tensors, so an optimizer built over the
parameters keeps working after a load.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from runtime import opcall
from runtime.autograd.node import RemovableHandle
from runtime.dispatcher import AUTOGRAD_BIT
from runtime.dtypes import as_dtype
from runtime.nn.hooks import add_hook, call_with_hooks
from runtime.nn.init import copy_into, zero_grad_in_place
from runtime.nn.parameter import Parameter
from runtime.tensor import Tensor


class IncompatibleKeys(NamedTuple):
    missing_keys: list[str]
    unexpected_keys: list[str]


def convert_tensor(t: Tensor, device: Any = None, dtype: Any = None) -> Tensor:
    """`t` on `device` with `dtype` (either None: unchanged); `t` itself when nothing changes."""
    G = opcall.api
    target_device = G.device(device) if device is not None else t.device
    if target_device.type == "cuda" and target_device.index is None:
        target_device = G.device("cuda", 0)
    target_dtype = as_dtype(dtype) if dtype is not None else t.dtype
    if target_device == t.device and target_dtype is t.dtype:
        return t
    return t.detach().to(target_device, target_dtype)


def _replace_data(p: Tensor, new: Tensor) -> None:
    """Point the existing tensor `p` at `new`'s data (as PyTorch's `p.data = new`), keeping its identity."""
    requires_grad = p._requires_grad
    for name in ("_data", "_storage", "_dtype", "_device", "_base"):
        object.__setattr__(p, name, getattr(new, name))
    p._keys = new._keys & ~AUTOGRAD_BIT | (AUTOGRAD_BIT if requires_grad else 0)


class Module:
    """Base class of every layer: subclasses set attributes in __init__ and define forward()."""

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", [])
        object.__setattr__(self, "_forward_hooks", [])
        object.__setattr__(self, "_backward_hooks", [])

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation of the module: subclasses define it; calling the module (`m(x)`) runs it with the hooks."""
        name = type(self).__name__
        raise NotImplementedError(f'Module [{name}] is missing the required "forward" function')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._forward_pre_hooks or self._forward_hooks or self._backward_hooks:
            return call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    # -- hooks (runtime/nn/hooks.py) --------------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """`hook(module, args)` (or `(module, args, kwargs)`) before forward; a non-None result replaces the
        arguments (a single value is wrapped in a tuple)."""
        return add_hook(self._forward_pre_hooks, hook, prepend, with_kwargs)

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """`hook(module, args, output)` (or `(module, args, kwargs, output)`) after forward; a non-None result
        replaces the output."""
        return add_hook(self._forward_hooks, hook, prepend, with_kwargs)

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """`hook(module, grad_input, grad_output)` once the gradients w.r.t. the module's tensor inputs are
        computed; a non-None result replaces grad_input."""
        return add_hook(self._backward_hooks, hook, prepend, False)

    # -- registration ---------------------------------------------------------------------------
    def _check_ready(self) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign parameters or modules before {type(self).__name__}.__init__ "
                                 "calls super().__init__()")

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register `param` (a Parameter, or None for an absent one) under `name`."""
        self._check_ready()
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(G.nn.Parameter or None required)")
        self._validate_name(name, self._parameters)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register a tensor that is state but not a parameter (running statistics); `persistent=False` keeps it out of
        state_dict()."""
        self._check_ready()
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(G.Tensor or None required)")
        self._validate_name(name, self._buffers)
        self._buffers[name] = tensor
        non_persistent = self.__dict__.setdefault("_non_persistent", set())
        if persistent:
            non_persistent.discard(name)
        else:
            non_persistent.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register `module` (or None) as a submodule under `name`."""
        self._check_ready()
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._validate_name(name, self._modules)
        self._modules[name] = module

    register_module = add_module

    def _validate_name(self, name: str, own: dict[str, Any]) -> None:
        if not isinstance(name, str):
            raise TypeError(f"attribute name should be a string, got {type(name).__name__}")
        if not name or "." in name:
            raise KeyError(f"attribute name can't be empty or contain '.', got {name!r}")
        if name not in own and (name in self.__dict__ or hasattr(type(self), name)):
            raise KeyError(f"attribute '{name}' already exists")
        for table in (self._parameters, self._buffers, self._modules):
            if table is not own and name in table:
                raise KeyError(f"attribute '{name}' already exists")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if isinstance(value, Parameter):
            self._check_ready()
            self._forget(name)
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            self._check_ready()
            self._forget(name)
            self.add_module(name, value)
        elif "_parameters" in d and name in d["_parameters"]:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(G.nn.Parameter or None expected)")
            d["_parameters"][name] = None
        elif "_modules" in d and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                "(G.nn.Module or None expected)")
            d["_modules"][name] = None
        elif "_buffers" in d and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(G.Tensor or None expected)")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str) -> None:
        self.__dict__.pop(name, None)
        for table in (self._parameters, self._buffers, self._modules):
            table.pop(name, None)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for table in (self._parameters, self._buffers, self._modules):
            if name in table:
                del table[name]
                return
        object.__delattr__(self, name)

    # -- traversal --------------------------------------------------------------------------------
    def named_modules(self, memo: set[int] | None = None, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """Yield (qualified name, module) for this module and every submodule, each once."""
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name)

    def modules(self) -> Iterator[Module]:
        """Yield this module and every submodule, each once."""
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """Yield (name, module) for the direct submodules."""
        seen: set[int] = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self) -> Iterator[Module]:
        """Yield the direct submodules."""
        for _, child in self.named_children():
            yield child

    def _named_members(self, table: str, prefix: str, recurse: bool) -> Iterator[tuple[str, Tensor]]:
        seen: set[int] = set()
        mods = self.named_modules(prefix=prefix) if recurse else iter([(prefix, self)])
        for mod_prefix, mod in mods:
            for name, t in getattr(mod, table).items():
                if t is None or id(t) in seen:
                    continue
                seen.add(id(t))
                yield (f"{mod_prefix}.{name}" if mod_prefix else name), t

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Yield (qualified name, parameter) for the parameters of this module (and, with `recurse`, of its
        submodules)."""
        yield from self._named_members("_parameters", prefix, recurse)  # type: ignore[misc]

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Yield the parameters of this module (and, with `recurse`, of its submodules), each once."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Tensor]]:
        """Yield (qualified name, buffer) for the buffers of this module (and, with `recurse`, of its submodules)."""
        yield from self._named_members("_buffers", prefix, recurse)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Yield the buffers of this module (and, with `recurse`, of its submodules)."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call `fn` on every submodule and then on this module; returns self."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # -- modes and gradients ------------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (`mode=True`) or evaluation mode on this module and its submodules; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode (dropout off, batch norm uses running statistics); same as train(False)."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set requires_grad of every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter: to None (`set_to_none=True`) or to zeros."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                zero_grad_in_place(p)

    # -- devices and dtypes ---------------------------------------------------------------------------
    def to(self, device: Any = None, dtype: Any = None) -> Module:
        """Move every parameter and buffer in place (the Parameter objects stay the same)."""
        G = opcall.api
        if isinstance(device, G.DType):
            device, dtype = None, device
        for m in self.modules():
            for p in m._parameters.values():
                if p is None:
                    continue
                new_dtype = dtype if dtype is not None and p.is_floating_point() else None
                _replace_data(p, convert_tensor(p, device, new_dtype))
                if p.grad is not None:
                    p._grad = convert_tensor(p.grad, device, new_dtype)
            for name, b in m._buffers.items():
                if b is not None:
                    new_dtype = dtype if dtype is not None and b.is_floating_point() else None
                    m._buffers[name] = convert_tensor(b, device, new_dtype)
        return self

    def cpu(self) -> Module:
        """Move the parameters and buffers to the CPU; returns self."""
        return self.to("cpu")

    def cuda(self, device: int | None = None) -> Module:
        """Move the parameters and buffers to a CUDA device (the current one, or `device`); returns self."""
        return self.to("cuda" if device is None else f"cuda:{device}")

    def float(self) -> Module:
        """Cast the floating parameters and buffers to float32; returns self."""
        G = opcall.api
        return self.to(dtype=G.float32)

    def double(self) -> Module:
        """Cast the floating parameters and buffers to float64; returns self."""
        G = opcall.api
        return self.to(dtype=G.float64)

    # -- state -----------------------------------------------------------------------------------------
    def state_dict(self, prefix: str = "", keep_vars: bool = False) -> OrderedDict[str, Tensor]:
        """Every parameter and persistent buffer by dotted name (detached unless keep_vars)."""
        out: OrderedDict[str, Tensor] = OrderedDict()
        for mod_prefix, m in self.named_modules(prefix=prefix.rstrip(".")):
            skip = m.__dict__.get("_non_persistent", set())
            for table in (m._parameters, m._buffers):
                for name, t in table.items():
                    if t is None or (table is m._buffers and name in skip):
                        continue
                    out[f"{mod_prefix}.{name}" if mod_prefix else name] = t if keep_vars else t.detach()
        return out

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True) -> IncompatibleKeys:
        """Copy `state_dict`'s values into this module's tensors (same names, same shapes)."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict).__name__}.")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            shape = tuple(value.shape) if hasattr(value, "shape") else ()
            if shape != tuple(target.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape {list(shape)} from "
                              f"checkpoint, the shape in current model is {list(target.shape)}.")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected)
                              + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing)
                              + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        for key, target in own.items():
            if key in state_dict:
                value = state_dict[key]
                if isinstance(value, Tensor):
                    value = convert_tensor(value, target.device, target.dtype)
                copy_into(target, value)
        return IncompatibleKeys(missing, unexpected)

    def save(self, path: Any) -> None:
        """Write state_dict() to `path` as .npz (G.save)."""
        from runtime.nn.serialization import save
        save(self.state_dict(), path)

    def load(self, path: Any, strict: bool = True) -> IncompatibleKeys:
        """load_state_dict() from a file written by save() (G.load)."""
        from runtime.nn.serialization import load
        return self.load_state_dict(load(path), strict=strict)

    # -- printing ----------------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The module's own settings as shown inside its repr (`in_features=4, ...`); '' by default."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        """PyTorch's layout: `Name(extra)` on one line, else the extra lines and `(name): child` lines indented."""
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + repr(child).replace("\n", "\n  ") for name, child in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if lines:
            body = extra_lines[0] if len(extra_lines) == 1 and not child_lines else "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"

    def __dir__(self) -> list[str]:
        names = set(self._parameters) | set(self._buffers) | set(self._modules)
        return sorted(set(super().__dir__()) | names)
