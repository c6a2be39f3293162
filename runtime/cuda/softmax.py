"""softmax / log_softmax on CUDA: row kernels of generated/cuda/softmax.cu (codegen/gen_cuda.py:
SOFTMAX_PAIRS). The softmax dim is moved last and rows are made contiguous (a no-op for dim=-1 of a
contiguous tensor); the result is written contiguous in that order and permuted back (a view)."""

from __future__ import annotations

from typing import Any

from runtime.cuda import fixed as F
from runtime.cuda import launch as L
from runtime.vocabulary import HALF_DTYPES


def softmax(t: Any, dim: int, dtype: Any = None, half_to_float: bool = False, log: bool = False) -> Any:
    """softmax (or log_softmax) of CUDA tensor `t` along `dim`; `dtype` casts the input first (as
    torch.softmax); `half_to_float` writes float32 for half precision input (as torch._softmax)."""
    from runtime.cuda.device import require_cupy

    cupy = require_cupy()

    from runtime import dtypes
    from runtime.cuda import copy as C
    from runtime.cuda.compile import load_function
    from runtime.cuda.reduce import normalize_dims
    from runtime.tensor import Tensor

    name = "log_softmax" if log else "softmax"
    if dtype is not None and dtypes.as_dtype(dtype) is not t.dtype:
        t = C.to_dtype(t, dtypes.as_dtype(dtype))
    if not t.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}_cuda\" not implemented for '{t.dtype.name}'")
    out_dtype = t.dtype
    if half_to_float:
        if t.dtype.name not in HALF_DTYPES:
            raise RuntimeError("conversion of half to float is supported only for half precision input")
        out_dtype = dtypes.float32
    (d,) = normalize_dims(dim, t.ndim) or (0,)
    device = F.device_of(t)
    with cupy.cuda.Device(device):
        ndim = max(t.ndim, 1)
        perm = tuple(i for i in range(ndim) if i != d) + (d,)
        moved = Tensor._wrap(t._data.reshape(1) if t.ndim == 0 else t._data.transpose(perm), t.dtype)
        data = C.contiguous(moved)
        out = F.empty(tuple(data.shape), out_dtype, device)
        cols = int(data.shape[-1])
        rows = int(data.size) // cols if cols else 0
        if rows:
            bits = L.index_width(data.size <= L.INT32_LIMIT)
            fn = load_function(F.source_path("cuda/softmax.cu"),
                               f"{name}__{t.dtype.name}__{out_dtype.name}{bits}", device)
            grid = max(1, min(rows, 65535))
            index = F.index_np(bits)
            fn((grid,), (F.block_threads(cols),), (data, out, index(rows), index(cols)),
               stream=cupy.cuda.get_current_stream())
        inverse = [0] * ndim
        for i, p in enumerate(perm):
            inverse[p] = i
        result = out.reshape(()) if t.ndim == 0 else out.transpose(inverse)
        return Tensor._wrap(result, out_dtype)
