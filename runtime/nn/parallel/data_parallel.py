"""`nn.DataParallel` on one device, `nn.Container` and `nn.factory_kwargs` (torch.nn's, for the programs that
name them).

DataParallel splits a batch across several GPUs in PyTorch; opgen runs a process on one device, where
PyTorch's DataParallel also just calls the wrapped module. So here it always does: the wrapper keeps the
module as its child `module` (state_dict keys "module.<name>", as PyTorch's) and forwards every call.
"""

from __future__ import annotations

from typing import Any

from runtime.nn.module import Module


class DataParallel(Module):
    """Calls the wrapped `module` as is: opgen runs on one device, so no batch is split (state_dict keys gain
    "module.")."""
    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel expects an nn.Module, got {type(module).__name__}")
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


class Container(Module):
    """The deprecated container that takes its children as keyword arguments."""

    def __init__(self, **kwargs: Module) -> None:
        super().__init__()
        import warnings
        warnings.warn("nn.Container is deprecated. All of it's functionality is now implemented in nn.Module. "
                      "Subclass that instead.", DeprecationWarning, stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)


def factory_kwargs(kwargs: dict[str, Any] | None) -> dict[str, Any]:
    """The `device`, `dtype` and `memory_format` of `kwargs` (also accepted nested as
    kwargs["factory_kwargs"]), for passing on to tensor factories."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    expected = simple | {"factory_kwargs"}
    unknown = set(kwargs) - expected
    if unknown:
        raise TypeError(f"unexpected kwargs {sorted(unknown)}")
    out = {k: kwargs[k] for k in simple if k in kwargs}
    nested = kwargs.get("factory_kwargs", {})
    clash = set(out) & set(nested)
    if clash:
        raise TypeError(f"{sorted(clash)} are specified both in kwargs and in factory_kwargs")
    out.update(nested)
    return out
