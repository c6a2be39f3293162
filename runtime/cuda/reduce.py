"""Launching the reduction kernels of generated/cuda/reduce.cu (codegen/gen_cuda.py: REDUCTIONS).

The input is presented as M rows of R elements: reduced dims are moved last (a permuted view, made
contiguous when the kernel cannot walk it with one row and one column stride). Many rows: one block per
row. One or few rows of many elements: Note [Two-pass reductions] in opgen_reduce.cuh.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime.cuda import launch as L

REDUCE_SOURCE = "cuda/reduce.cu"
TWO_PASS_MIN = 1 << 16  # a row at least this long, with few rows, is reduced in two passes
PARTIAL_BLOCKS_PER_SM = 4


def normalize_dims(dims: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """Reduced dims as sorted non-negative ints; None or [] means every dim (PyTorch)."""
    if dims is None:
        return tuple(range(ndim))
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if not dims:
        return tuple(range(ndim))
    out = []
    for d in dims:
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, "
                             f"{max(ndim, 1) - 1}], but got {d})")
        out.append(d % max(ndim, 1))
    if len(set(out)) != len(out):
        raise RuntimeError(f"dim {out} appears multiple times in the list of dims")
    return tuple(sorted(set(out)))


def reduced_shape(shape: Sequence[int], dims: Sequence[int], keepdim: bool) -> tuple[int, ...]:
    if keepdim:
        return tuple(1 if i in dims else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in dims)


def row_layout(shape: Sequence[int], dims: Sequence[int]) -> tuple[tuple[int, ...], int, int]:
    """(permutation putting reduced dims last, rows M, row length R)."""
    kept = [i for i in range(len(shape)) if i not in dims]
    perm = tuple(kept + list(dims))
    rows = int(np.prod([shape[i] for i in kept], dtype=np.int64)) if kept else 1
    cols = int(np.prod([shape[i] for i in dims], dtype=np.int64)) if dims else 1
    return perm, rows, cols


def use_two_pass(rows: int, cols: int, sm_count: int) -> bool:
    return cols >= TWO_PASS_MIN and rows < sm_count


def reduce(op: str, t: Any, dims: int | Sequence[int] | None = None, keepdim: bool = False,
           out_dtype: Any = None) -> Any:
    """`op` (sum, prod, mean, amax, amin, any, all) of CUDA tensor `t` over `dims`."""
    import cupy

    from runtime import dtypes
    from runtime.cuda.compile import load_function
    from runtime.cuda.device import sm_count
    from runtime.cuda.pointwise import _empty
    from runtime.tensor import Tensor

    dims_n = normalize_dims(dims, t.ndim)
    out_shape = reduced_shape(t.shape, dims_n, keepdim)
    source = _source_path()
    name = f"reduce_{op}__{t.dtype.name}"
    result_dtype = _result_dtype(op, t.dtype, dtypes)
    if out_dtype is not None and dtypes.as_dtype(out_dtype) is not result_dtype:
        t = Tensor._wrap(t._data.astype(dtypes.as_dtype(out_dtype).np), dtypes.as_dtype(out_dtype))
        name, result_dtype = f"reduce_{op}__{t.dtype.name}", dtypes.as_dtype(out_dtype)
    device = t.device.index or 0
    with cupy.cuda.Device(device):
        perm, rows, cols = row_layout(t.shape, dims_n)
        data = cupy.ascontiguousarray(t._data.transpose(perm)) if t.ndim else t._data.reshape(1)
        result = _empty(cupy, out_shape, result_dtype.np, device)
        if rows == 0:
            return Tensor._wrap(result, result_dtype)
        if cols == 0 and op in ("amax", "amin"):
            raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0.")
        sms = sm_count(device)
        bits = 32 if data.size <= L.INT32_LIMIT else 64
        index_np = np.uint32 if bits == 32 else np.uint64
        stream = cupy.cuda.get_current_stream()
        if use_two_pass(rows, cols, sms) and rows == 1:
            parts = sms * PARTIAL_BLOCKS_PER_SM
            acc_dtype = _acc_dtype(op, t.dtype.name)
            partial = cupy.empty(parts, dtype=acc_dtype)
            load_function(source, f"{name}__partial{bits}", device)(
                (parts,), (L.THREADS,), (data, partial, index_np(cols)), stream=stream)
            load_function(source, f"{name}__finish", device)(
                (1,), (L.THREADS,), (partial, result, np.int32(parts), np.int64(cols)), stream=stream)
        else:
            fn = load_function(source, f"{name}__rows{bits}", device)
            grid = max(1, min(rows, sms * L.BLOCKS_PER_SM * 4))
            fn((grid,), (L.THREADS,), (data, result, index_np(rows), index_np(cols), index_np(cols),
                                       index_np(1)), stream=stream)
        return Tensor._wrap(result, result_dtype)


def _acc_dtype(op: str, dtype: str) -> Any:
    if op in ("any", "all"):
        return np.bool_
    if dtype in ("float16", "bfloat16", "float32"):
        return np.float32
    if dtype == "float64":
        return np.float64
    return np.int64 if op in ("sum", "prod", "mean") else np.dtype(dtype)


def _result_dtype(op: str, dtype: Any, dtypes: Any) -> Any:
    if op in ("any", "all"):
        return dtypes.bool_
    if op in ("sum", "prod") and not dtype.is_floating_point:
        return dtypes.int64
    return dtype


def _source_path() -> str:
    import os

    import generated

    return os.path.join(os.path.dirname(os.path.abspath(generated.__file__)), REDUCE_SOURCE)
