"""What `G.compile(module)` returns (PyTorch's OptimizedModule): a Module holding the original as
`_orig_mod`, so that its parameters, buffers, `train()`/`eval()` and state_dict (keys under `_orig_mod.`,
as PyTorch's) are the original's, and whose call runs the compiled function of the original module."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from runtime.nn.module import Module


class OptimizedModule(Module):
    """`G.compile(module)`: calls run `compiled` (the compiled function of `mod`'s call); any attribute
    the wrapper lacks is the original module's, else the compiled function's (`graphs`, `programs`)."""

    def __init__(self, mod: Module, compiled: Callable[..., Any]) -> None:
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled_forward", compiled)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled_forward(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            pass
        try:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)
        except AttributeError:
            return getattr(self.__dict__["_compiled_forward"], name)  # its graphs and programs
