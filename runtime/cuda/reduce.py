"""Launching the reduction kernels of generated/cuda/reduce/<op>.cu (codegen/gen_cuda.py: REDUCTIONS).

The input is presented as M rows of R elements: reduced dims are moved last (a permuted view). When the
kept dims and the reduced dims each merge into one dim the kernel walks the view with a row stride and a
column stride; otherwise the view is made contiguous first. Many rows: one block per row. One row of
many elements (a full reduction): Note [Two-pass reductions] in opgen_reduce.cuh.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime.cuda import fixed as F
from runtime.cuda import launch as L

TWO_PASS_MIN = 1 << 16  # a single row at least this long is reduced in two passes
PARTIAL_BLOCKS_PER_SM = 4
ACC_BYTES = 32  # room for any accumulator (Welford of double: 24 bytes)
FLOATING_ONLY = {"mean": "mean", "var": "std and var", "std": "std and var"}
NONEMPTY = ("amax", "amin", "max", "min")
INDEXED = ("max", "min")  # reducers whose kernels write an index per output


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
    return tuple(sorted(d for d in set(out) if d < ndim))


def reduced_shape(shape: Sequence[int], dims: Sequence[int], keepdim: bool) -> tuple[int, ...]:
    if keepdim:
        return tuple(1 if i in dims else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in dims)


def row_layout(shape: Sequence[int], dims: Sequence[int]) -> tuple[tuple[int, ...], int, int]:
    """(permutation putting reduced dims last, rows M, row length R)."""
    kept = [i for i in range(len(shape)) if i not in dims]
    perm = tuple(kept + list(dims))
    rows = math.prod(shape[i] for i in kept)
    cols = math.prod(shape[i] for i in dims)
    return perm, rows, cols


def row_strides(shape: Sequence[int], strides: Sequence[int], dims: Sequence[int]) -> tuple[int, int] | None:
    """(row stride, column stride) when the kept dims and the reduced dims each walk as one dim, else None."""
    kept = [i for i in range(len(shape)) if i not in dims]
    result = []
    for group in (kept, list(dims)):
        gshape, gstrides = L.coalesce(tuple(shape[i] for i in group), [tuple(strides[i] for i in group)])
        if len(gshape) > 1:
            return None
        result.append(gstrides[0][0] if gshape else 0)
    return result[0], result[1]


def use_two_pass(rows: int, cols: int) -> bool:
    return rows == 1 and cols >= TWO_PASS_MIN


def result_dtype(op: str, dtype: Any) -> Any:
    from runtime import dtypes

    if op in ("any", "all"):
        return dtypes.bool_
    if op in ("sum", "prod") and not dtype.is_floating_point:
        return dtypes.int64
    return dtype


def check_dtype(op: str, dtype: Any) -> None:
    if op in FLOATING_ONLY and not dtype.is_floating_point:
        if op == "mean":
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating "
                               f"point or complex dtype. Got: {dtype.name.capitalize()}")
        raise RuntimeError(f"{FLOATING_ONLY[op]} only support floating point and complex dtypes")


def reduce(op: str, t: Any, dims: int | Sequence[int] | None = None, keepdim: bool = False,
           dtype: Any = None, correction: float = 0.0) -> Any:
    """`op` (sum, prod, mean, amax, amin, max, min, any, all, var, std) of CUDA tensor `t` over `dims`.

    `dtype` casts the input first (sum/prod/mean's dtype=); `correction` is var/std's.
    """
    return _reduce(op, t, dims, keepdim, dtype, correction, with_indices=False)[0]


def reduce_with_indices(op: str, t: Any, dim: int | None, keepdim: bool = False) -> tuple[Any, Any]:
    """(values, int64 indices) of max or min over one dim (None: the flattened tensor)."""
    if dim is None:
        from runtime.cuda import copy as C
        from runtime.tensor import Tensor

        flat = Tensor._wrap(C.contiguous(t).reshape(-1), t.dtype)
        values, indices = _reduce(op, flat, 0, False, None, 0.0, with_indices=True)
        if keepdim:
            shape = (1,) * t.ndim
            values = Tensor._wrap(values._data.reshape(shape), values.dtype)
            indices = Tensor._wrap(indices._data.reshape(shape), indices.dtype)
        return values, indices
    return _reduce(op, t, dim, keepdim, None, 0.0, with_indices=True)


def _reduce(op: str, t: Any, dims: Any, keepdim: bool, dtype: Any, correction: float,
            with_indices: bool) -> tuple[Any, Any]:
    from runtime.cuda.device import require_cupy

    cupy = require_cupy()

    from runtime import dtypes
    from runtime.cuda import copy as C
    from runtime.tensor import Tensor

    if dtype is not None and dtypes.as_dtype(dtype) is not t.dtype:
        t = C.to_dtype(t, dtypes.as_dtype(dtype))
    check_dtype(op, t.dtype)
    dims_n = normalize_dims(dims, t.ndim)
    out_shape = reduced_shape(t.shape, dims_n, keepdim)
    out_dtype = result_dtype(op, t.dtype)
    device = F.device_of(t)
    with cupy.cuda.Device(device):
        perm, rows, cols = row_layout(t.shape, dims_n)
        result = F.empty(out_shape, out_dtype, device)
        # the max/min kernels always write their indices (opgen_reduce.cuh: has_index), asked for or not
        indices = F.empty(out_shape, dtypes.int64, device) if with_indices or op in INDEXED else None
        if rows and cols == 0 and op in NONEMPTY:
            if dims is None or (not isinstance(dims, int) and not dims):
                raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0. "
                                 "Specify the reduction dim with the 'dim' argument.")
            empty = next(d for d in dims_n if t.shape[d] == 0)
            raise IndexError(f"{op}(): Expected reduction dim {empty} to have non-zero size.")
        if rows:
            _launch(op, t, dims_n, rows, cols, result, indices, correction, device)
        values = Tensor._wrap(result, out_dtype)
        if dtype is not None and out_dtype is not t.dtype:
            # an integer sum/prod asked for in its own dtype (sum(x, dtype=int8)): computed in int64, then cast,
            # which wraps as PyTorch's does
            values = C.to_dtype(values, t.dtype)
        return values, (Tensor._wrap(indices, dtypes.int64) if with_indices else None)


def _launch(op: str, t: Any, dims: tuple[int, ...], rows: int, cols: int, result: Any, indices: Any,
            correction: float, device: int) -> None:
    from runtime.cuda.device import require_cupy

    cupy = require_cupy()

    from runtime.cuda import copy as C
    from runtime.cuda.compile import load_function
    from runtime.cuda.device import sm_count

    data = t._data if t.ndim else t._data.reshape(1)
    shape, strides = tuple(data.shape), F.element_strides(data)
    layout = row_strides(shape, strides, dims) if t.ndim and all(s >= 0 for s in strides) else None
    if layout is None or (use_two_pass(rows, cols) and layout[1] != 1):
        perm, _, _ = row_layout(shape, dims) if t.ndim else ((0,), rows, cols)
        data = C.contiguous(_permuted(t, perm))
        layout = (cols, 1)
    row_stride, col_stride = layout
    reach = (rows - 1) * row_stride + (cols - 1) * col_stride if cols else 0
    bits = L.index_width(max(reach, rows, cols) <= L.INT32_LIMIT)
    index = F.index_np(bits)
    name = f"reduce_{op}__{t.dtype.name}"
    source = F.source_path(f"cuda/reduce/{op}.cu")
    stream = cupy.cuda.get_current_stream()
    idx_arg = indices if indices is not None else np.uint64(0)
    param = np.float64(correction)
    sms = sm_count(device)
    if use_two_pass(rows, cols):
        parts = sms * PARTIAL_BLOCKS_PER_SM
        partial = cupy.empty(parts * ACC_BYTES, dtype=np.uint8)
        load_function(source, f"{name}__partial{bits}", device)(
            (parts,), (L.THREADS,), (data, partial, index(cols)), stream=stream)
        load_function(source, f"{name}__finish", device)(
            (1,), (L.THREADS,), (partial, result, idx_arg, np.int32(parts), np.int64(cols), param), stream=stream)
        return
    fn = load_function(source, f"{name}__rows{bits}", device)
    grid = max(1, min(rows, sms * L.BLOCKS_PER_SM * 4))
    fn((grid,), (F.block_threads(cols),), (data, result, idx_arg, index(rows), index(cols), index(row_stride),
                                            index(col_stride), param), stream=stream)


def _permuted(t: Any, perm: tuple[int, ...]) -> Any:
    from runtime.tensor import Tensor

    return Tensor._wrap(t._data.transpose(perm) if t.ndim else t._data.reshape(1), t.dtype)
