"""`G.nn.Module`: the base of layers, holding parameters, buffers and sub-modules by attribute name.

As in PyTorch, assigning a Parameter or a Module to an attribute registers it (`self.fc = Linear(...)`),
names are dotted paths (`"0.weight"`), and `state_dict()` / `load_state_dict()` map those names to
tensors. `load_state_dict` copies values into the existing tensors, so an optimizer built over the
parameters keeps working after a load.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from runtime import opcall
from runtime.autograd.node import RemovableHandle
from runtime.dtypes import as_dtype
from runtime.nn.hooks import add_hook, call_with_hooks
from runtime.nn.init import zero_grad_in_place
from runtime.nn.module_state import IncompatibleKeys, StateDictMixin
from runtime.nn.parameter import Buffer, Parameter
from runtime.nn.tensor_data import _replace_data, convert_tensor
from runtime.tensor import Tensor


def _to_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """(device, dtype) of Module.to's argument forms (either may be None)."""
    G = opcall.api
    kwargs = dict(kwargs)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    rest = [a for a in args if not isinstance(a, bool)]  # a positional non_blocking
    if len(rest) > 2:
        raise TypeError(f"to() takes at most 2 positional arguments ({len(rest)} given)")
    for a in rest:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, G.DType):
            dtype = a
        else:
            device = a
    return device, (as_dtype(dtype) if dtype is not None else None)


class Module(StateDictMixin):
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
        d = self.__dict__
        if self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or d.get("_backward_pre_hooks") \
                or "_compiled_call_impl" in d:  # (one test on the common path; `module.compile()` sets the last)
            compiled = d.get("_compiled_call_impl")
            return compiled(*args, **kwargs) if compiled is not None else call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        """The call without `module.compile()`'s function: hooks around forward."""
        if self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self.__dict__.get(
                "_backward_pre_hooks"):
            return call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile this module's call in place with `G.compile(..., *args, **kwargs)` (later calls of the
        module run the compiled function; its parameters and state_dict keys stay as they are)."""
        object.__setattr__(self, "_compiled_call_impl", opcall.api.compile(self._call_impl, *args, **kwargs))

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

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """`hook(module, grad_output)` when the gradients w.r.t. the module's outputs are computed; a non-None
        result replaces grad_output."""
        return add_hook(self.__dict__.setdefault("_backward_pre_hooks", []), hook, prepend, False)

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
        # Note [Reassignment keeps the position]: a Parameter or Module assigned to a name its own table already
        # holds replaces the entry in place (an OrderedDict keeps the key's position), so named_children(),
        # parameters() and state_dict() keep their order; it is only removed from the *other* tables.
        d = self.__dict__
        if isinstance(value, Buffer):
            self._check_ready()
            self._forget(name, keep=d["_buffers"])
            self.register_buffer(name, value.data, persistent=value.persistent)
        elif isinstance(value, Parameter):
            self._check_ready()
            self._forget(name, keep=d["_parameters"])
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            self._check_ready()
            self._forget(name, keep=d["_modules"])
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

    def _forget(self, name: str, keep: dict[str, Any] | None = None) -> None:
        self.__dict__.pop(name, None)
        for table in (self._parameters, self._buffers, self._modules):
            if table is not keep:
                table.pop(name, None)
        if keep is not self._buffers:
            self.__dict__.get("_non_persistent", set()).discard(name)

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
    def named_modules(self, memo: set[Module] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """This module and every descendant with its dotted name; one visit each unless remove_duplicate=False.
        `memo` (a set of modules, as PyTorch's) collects the visited ones across calls."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

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

    def _named_members(self, table: str, prefix: str, recurse: bool,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        seen: set[int] = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else iter([(prefix, self)])
        for mod_prefix, mod in mods:
            for name, t in getattr(mod, table).items():
                if t is None or (remove_duplicate and id(t) in seen):
                    continue
                seen.add(id(t))
                yield (f"{mod_prefix}.{name}" if mod_prefix else name), t

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Yield (dotted name, parameter) pairs of this module and, with `recurse`, its submodules; names start with
        `prefix`, and a shared parameter comes once unless remove_duplicate=False."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)  # type: ignore[misc]

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Yield the parameters of this module (and, with `recurse`, of its submodules), each once."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """Yield (dotted name, buffer) pairs of this module and, with `recurse`, its submodules; names start with
        `prefix`, and a shared buffer comes once unless remove_duplicate=False."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

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

    def get_submodule(self, target: str) -> Module:
        """The descendant at dotted path `target` ("" is this module)."""
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Replace (or, unless strict, add) the descendant at dotted path `target`."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        *path, name = target.split(".")
        parent = self.get_submodule(".".join(path))
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if not isinstance(module, Module):
            raise TypeError(f"`module` is not an nn.Module, found {type(module).__name__}")
        setattr(parent, name, module)

    def _get_member(self, target: str, table: str, what: str) -> Tensor:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        if name not in getattr(mod, table):
            raise AttributeError(f"`{name}` is not {what}")
        return getattr(mod, name)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path `target` (AttributeError if there is none)."""
        return self._get_member(target, "_parameters", "an nn.Parameter")  # type: ignore[return-value]

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path `target` (AttributeError if there is none)."""
        return self._get_member(target, "_buffers", "a buffer")

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
    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        """Replace every parameter's data (in place: the Parameter objects stay), its grad, and every buffer
        by `fn` of them."""
        mods = self.modules() if recurse else iter([self])
        for m in mods:
            for p in m._parameters.values():
                if p is None:
                    continue
                _replace_data(p, fn(p))
                if p.grad is not None:
                    p._grad = fn(p.grad)
            for name, b in m._buffers.items():
                if b is not None:
                    m._buffers[name] = fn(b)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """`to(device)`, `to(dtype)`, `to(device, dtype)`, `to(tensor)` (its device and dtype), with
        `non_blocking` accepted; a dtype applies to floating-point parameters and buffers only."""
        device, dtype = _to_args(args, kwargs)
        if dtype is not None and not (dtype.is_floating_point or getattr(dtype, "is_complex", False)):
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t: Tensor) -> Tensor:
            return convert_tensor(t, device, dtype if dtype is not None and t.is_floating_point() else None)
        return self._apply(convert)

    def cpu(self) -> Module:
        """Move the parameters and buffers to the CPU; returns self."""
        return self.to("cpu")

    def cuda(self, device: Any = None) -> Module:
        """Move the parameters and buffers to CUDA device `device` (an index or a device; the default CUDA device if
        None); returns self."""
        if device is None:
            return self.to("cuda")
        return self.to(device if not isinstance(device, int) else f"cuda:{device}")

    def type(self, dst_type: Any) -> Module:
        """Convert every parameter and buffer with Tensor.type(dst_type); returns self."""
        return self._apply(lambda t: t.type(dst_type))

    def _cast(self, dtype_name: str) -> Module:
        dtype = getattr(opcall.api, dtype_name)
        return self._apply(lambda t: convert_tensor(t, None, dtype) if t.is_floating_point() else t)

    def float(self) -> Module:
        """Cast the floating-point parameters and buffers to float32; returns self."""
        return self._cast("float32")

    def double(self) -> Module:
        """Cast the floating-point parameters and buffers to float64; returns self."""
        return self._cast("float64")

    def half(self) -> Module:
        """Cast the floating-point parameters and buffers to float16; returns self."""
        return self._cast("float16")

    def bfloat16(self) -> Module:
        """Cast the floating-point parameters and buffers to bfloat16; returns self."""
        return self._cast("bfloat16")

    def share_memory(self) -> Module:
        """Return self unchanged: opgen has no shared-memory tensors to move the parameters to."""
        return self

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """Every parameter and buffer replaced by an uninitialised tensor of its shape on `device`."""
        G = opcall.api
        return self._apply(lambda t: G.empty_like(t, device=device), recurse)

    call_super_init = False
    dump_patches = False

    def save(self, path: Any) -> None:
        """Write state_dict() to `path` in PyTorch's checkpoint format (G.save)."""
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
