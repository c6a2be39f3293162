"""The containers: Sequential, ModuleList, ModuleDict, ParameterList and ParameterDict (torch.nn's)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from runtime.nn.module import Module
from runtime.nn.parameter import Parameter
from runtime.tensor import Tensor


def _index(idx: int, n: int) -> int:
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx + n if idx < 0 else idx


class Sequential(Module):
    """Modules applied in order; indexable, iterable, and built from modules or an OrderedDict."""

    def __init__(self, *args: Module | OrderedDict[str, Module]) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)  # type: ignore[arg-type]

    def forward(self, input: Any) -> Any:
        for module in self._modules.values():
            input = module(input)
        return input

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, idx: int | slice) -> Any:
        items = list(self._modules.items())
        if isinstance(idx, slice):
            return Sequential(OrderedDict(items[idx]))
        if not -len(items) <= idx < len(items):
            raise IndexError(f"index {idx} is out of range")
        return items[idx][1]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[_index(idx, len(self))]
        setattr(self, key, module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)
        for key in (keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys))]]):
            del self._modules[key]
        # PyTorch renumbers the remaining modules "0", "1", ... to keep indexing working
        items = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def append(self, module: Module) -> Sequential:
        """Add a module at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Sequential:
        """Add modules at the end; returns self."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert `module` before position `index` (negative counts from the end); returns self."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        items = list(self._modules.values())
        items.insert(index + n if index < 0 else index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m
        return self

    def pop(self, key: int | slice) -> Module:
        """Remove the module (or, for a slice, modules) at `key` and return what self[key] gave."""
        v = self[key]
        del self[key]
        return v

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return Sequential(*self, *other)

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return self.extend(list(other))

    def __mul__(self, other: int) -> Sequential:
        if not isinstance(other, int) or other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for Sequential")
        return Sequential(*(list(self) * other))

    def __dir__(self) -> list[str]:
        return [k for k in super().__dir__() if not k.isdigit()]


class ModuleList(Module):
    """A list of modules whose parameters are registered (names "0", "1", ...)."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        """Add a module at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Add modules at the end; returns self."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            f"{type(modules).__name__}")
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert a module before position `index`."""
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for m in items:
            self.append(m)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, idx: int | slice) -> Any:
        items = list(self._modules.values())
        if isinstance(idx, slice):
            return ModuleList(items[idx])
        return items[_index(idx, len(items))]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(str(_index(idx, len(self))), module)

    def __delitem__(self, idx: int | slice) -> None:
        items = list(self._modules.values())
        del items[idx]
        self._modules.clear()
        for m in items:
            self.append(m)

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList([*self, *other])

    def pop(self, key: int | slice) -> Module:
        """Remove the module (or, for a slice, modules) at `key` and return what self[key] gave."""
        v = self[key]
        del self[key]
        return v

    def __repr__(self) -> str:
        """PyTorch's: runs of equal child reprs print once, as `(first-last): n x Child(...)`."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return "ModuleList()"
        lines, start = [], 0
        for i in range(1, len(reprs) + 1):
            if i < len(reprs) and reprs[i] == reprs[start]:
                continue
            body = reprs[start].replace("\n", "\n  ")
            lines.append(f"({start}): {body}" if i - start == 1 else f"({start}-{i - 1}): {i - start} x {body}")
            start = i
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """Modules by name, in insertion order; the names are the registered child names."""

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def keys(self) -> Iterable[str]:
        """The names, in insertion order."""
        return self._modules.keys()

    def values(self) -> Iterable[Module]:
        """The modules, in insertion order."""
        return self._modules.values()

    def items(self) -> Iterable[tuple[str, Module]]:
        """The (name, module) pairs, in insertion order."""
        return self._modules.items()

    def pop(self, key: str) -> Module:
        """Remove the module named `key` and return it."""
        return self._modules.pop(key)

    def get(self, key: str, default: Any = None) -> Any:
        """The module named `key`, or `default` if there is none."""
        return self._modules.get(key, default)

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add or replace modules from a mapping or (name, module) pairs."""
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for j, pair in enumerate(pairs):
            if isinstance(modules, Mapping):
                key, module = pair
            else:
                if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                    raise ValueError(f"ModuleDict update sequence element #{j} should be Iterable of length 2")
                key, module = pair
            self[key] = module


def _param_repr(p: Any) -> str:
    if not isinstance(p, Tensor):
        return f"Object of type: {type(p).__name__}"
    size = "x".join(str(s) for s in p.shape)
    device = f" ({p.device})" if p.device.type == "cuda" else ""
    kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
    return f"{kind} containing: [{p.dtype} of size {size}{device}]"


class ParameterList(Module):
    """A list of parameters registered as "0", "1", ... (plain tensors are made Parameters)."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        object.__setattr__(self, "_size", 0)
        if values is not None:
            self.extend(values)

    def _set(self, idx: int, value: Any) -> None:
        name = str(idx)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        else:
            self._parameters.pop(name, None)
            object.__setattr__(self, f"_obj_{name}", value)

    def _get(self, idx: int) -> Any:
        name = str(idx)
        return self._parameters[name] if name in self._parameters else self.__dict__[f"_obj_{name}"]

    def append(self, value: Any) -> ParameterList:
        """Add a parameter at the end (a tensor becomes a Parameter); returns self."""
        object.__setattr__(self, "_size", self._size + 1)
        self._set(self._size - 1, value)
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Add parameters at the end; returns self."""
        for v in values:
            self.append(v)
        return self

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self._get(i) for i in range(self._size))

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return ParameterList(list(self)[idx])
        return self._get(_index(idx, self._size))

    def __setitem__(self, idx: int, value: Any) -> None:
        self._set(_index(idx, self._size), value)

    def __iadd__(self, values: Iterable[Any]) -> ParameterList:
        return self.extend(values)

    def extra_repr(self) -> str:
        return "\n".join(f"  ({i}): {_param_repr(p)}" for i, p in enumerate(self))


class ParameterDict(Module):
    """Parameters by name (plain tensors are made Parameters)."""

    def __init__(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Any:
        return self._parameters[key]

    def __setitem__(self, key: str, value: Any) -> None:
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        self.register_parameter(key, value)

    def __delitem__(self, key: str) -> None:
        del self._parameters[key]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(self._parameters)

    def __contains__(self, key: object) -> bool:
        return key in self._parameters

    def keys(self) -> Iterable[str]:
        """The names, in insertion order."""
        return self._parameters.keys()

    def get(self, key: str, default: Any = None) -> Any:
        """The entry named `key`, or `default` if there is none."""
        return self._parameters.get(key, default)

    def pop(self, key: str) -> Any:
        """Remove the entry named `key` and return it."""
        return self._parameters.pop(key)

    def setdefault(self, key: str, default: Any = None) -> Any:
        """The entry named `key`, set to `default` first if there is none."""
        if key not in self._parameters:
            self[key] = default
        return self._parameters[key]

    def clear(self) -> None:
        """Remove every entry."""
        self._parameters.clear()

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same entries (the parameters are not copied)."""
        return ParameterDict(list(self.items()))

    def values(self) -> Iterable[Any]:
        """The parameters, in insertion order."""
        return self._parameters.values()

    def items(self) -> Iterable[tuple[str, Any]]:
        """The (name, parameter) pairs, in insertion order."""
        return self._parameters.items()

    def update(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        """Add or replace parameters from a mapping or (name, parameter) pairs."""
        pairs = parameters.items() if isinstance(parameters, Mapping) else parameters
        for key, value in pairs:
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): {_param_repr(p)}" for k, p in self.items())
