"""Moving a tensor's data: to another device or dtype (`convert_tensor`), and into an existing tensor object
(`_replace_data`, PyTorch's `p.data = new`), for Module.to, load_state_dict and the lazy parameters."""

from __future__ import annotations

from typing import Any

from runtime import opcall
from runtime.dispatcher import AUTOGRAD_BIT
from runtime.dtypes import as_dtype
from runtime.tensor import Tensor


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
