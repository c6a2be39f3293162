"""Helpers of the generated NumPy pointwise kernels (generated/_cpu_kernels.py)."""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from runtime import dtypes
from runtime.tensor import Tensor

# The NumPy dtype a pointwise kernel computes in: half precision computes in float32, as on CUDA.
COMPUTE_NP: dict[dtypes.DType, np.dtype] = {d: d.np for d in dtypes.ALL_DTYPES if d.np is not None}
COMPUTE_NP[dtypes.float16] = np.dtype(np.float32)


def result_type(*operands: Any) -> dtypes.DType:
    """PyTorch's result type of tensors and Python scalars; wrapped-number tensors count as the scalars
    they came from."""
    return dtypes.result_type(*(t._data.item() if isinstance(t, Tensor) and t._wrapped else t for t in operands))


def float_result_type(*tensors: Tensor) -> dtypes.DType:
    dt = result_type(*tensors)
    return dt if dt.is_floating_point else dtypes.get_default_dtype()


def broadcast_error(op: str, *arrays: Any) -> NoReturn:
    """Re-raise NumPy's broadcasting ValueError as PyTorch's RuntimeError, naming both shapes."""
    from runtime.strides import broadcast_shapes
    try:
        broadcast_shapes(*(tuple(a.shape) for a in arrays))
    except RuntimeError as e:
        raise RuntimeError(f"{op}: {e}") from None
    raise  # not a broadcasting problem: NumPy's own error stands


def unsupported(op: str, dt: dtypes.DType) -> NoReturn:
    raise RuntimeError(f"\"{op}\" not implemented for '{dt.name}'")


def store_inplace(op: str, target: Tensor, result: Any, dt: dtypes.DType) -> Tensor:
    """Write an in-place op's result into `target`, as PyTorch checks it."""
    if not dtypes.can_cast(dt, target._dtype):
        raise RuntimeError(f"{op}: result type {dt.name} can't be cast to the desired output type "
                           f"{target._dtype.name}")
    if result.shape != target._data.shape:
        raise RuntimeError(f"{op}: output with shape {list(target.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")
    target._data[...] = result
    return target


def store_out(op: str, out: Tensor, result: Any, dt: dtypes.DType) -> Tensor:
    """Write an op's result into `out=`; an empty `out` is resized, as PyTorch does."""
    if not dtypes.can_cast(dt, out._dtype):
        raise RuntimeError(f"{op}: result type {dt.name} can't be cast to the desired output type "
                           f"{out._dtype.name}")
    if result.shape != out._data.shape:
        if out._data.size != 0:
            raise RuntimeError(f"{op}: output with shape {list(out.shape)} doesn't match the broadcast shape "
                               f"{list(result.shape)} (only an empty out= tensor is resized)")
        out._data = np.empty(result.shape, dtype=out._dtype.np)
        out._storage = None
    out._data[...] = result
    return out


def erf(x: Any) -> Any:
    from math import erf as _erf
    return np.vectorize(_erf, otypes=[x.dtype if x.dtype.kind == "f" else np.float64])(x) if np.ndim(x) else \
        np.asarray(_erf(float(x)), dtype=x.dtype)


def sigmoid(x: Any) -> Any:
    # 1 / (1 + exp(-x)) without overflow warnings for large |x|
    out = np.empty_like(x)
    pos = x >= 0
    np.divide(1, 1 + np.exp(-x, where=pos, out=np.zeros_like(x)), where=pos, out=out)
    ex = np.exp(x, where=~pos, out=np.zeros_like(x))
    np.divide(ex, 1 + ex, where=~pos, out=out)
    return out


def log_sigmoid(x: Any) -> Any:
    return -np.logaddexp(0, -x)
