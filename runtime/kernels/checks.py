"""Argument checks PyTorch makes before a pointwise op runs, shared by the CPU (generated/_cpu_kernels.py)
and CUDA (generated/_cuda_kernels.py, runtime/cuda/pointwise.py) kernels: a condition or mask must be bool,
an `alpha` must suit the result dtype."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from runtime import dtypes

__all__ = ["check_alpha", "check_condition"]


def check_condition(op: str, name: str, t: Any) -> None:
    """A mask or condition argument must be bool (PyTorch's RuntimeError); `where` also takes uint8, which
    PyTorch accepts with a deprecation warning."""
    dt = t._dtype
    if dt is dtypes.bool_:
        return
    if op == "where" and dt is dtypes.uint8:
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated; use a boolean "
                      "condition instead.", UserWarning, stacklevel=3)
        return
    raise RuntimeError(f"{op} expected {name} to be a boolean tensor, but got a tensor with dtype {dt.name}")


def check_alpha(dt: dtypes.DType, alpha: Any) -> None:
    """PyTorch's alpha_check: no floating alpha for integral results, no bool alpha for non-bool results.
    Generated kernels call it only for an alpha that is not a plain int (the default 1 is)."""
    if isinstance(alpha, bool):
        if dt is not dtypes.bool_:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif not dt.is_floating_point and not isinstance(alpha, int | np.integer):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
