"""copy_ / cast between any strides and any dtypes, fill_ and arange on CUDA (generated/cuda/copy/*.cu and
generated/cuda/fill.cu; codegen/gen_cuda.py: `copy_pairs`, `fill_instances`).

`copy_(dst, src)` broadcasts `src` to `dst`'s shape, moves it to `dst`'s device when needed and converts
its dtype in the kernel (one kernel `copy__<src>__<dst>` per dtype pair). Both sides dense: a `contig`
kernel; otherwise the `strided` kernel walks both with Note [Strided operands]. Overlapping `dst` and
`src` (a view of itself) go through a temporary, as PyTorch does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from runtime.cuda import fixed as F
from runtime.cuda import launch as L
from runtime.cuda.launch import broadcast_strides

BFLOAT16_MAX = 3.3895313892515355e38  # (2 - 2**-7) * 2**127


def _overlaps(a: Any, b: Any) -> bool:
    """Whether two device arrays may share memory (a conservative byte-range test)."""
    if a.size == 0 or b.size == 0:
        return False
    lo_a, hi_a = _span(a)
    lo_b, hi_b = _span(b)
    return lo_a < hi_b and lo_b < hi_a


def _span(a: Any) -> tuple[int, int]:
    start = a.data.ptr
    extent = sum((n - 1) * abs(s) for n, s in zip(a.shape, a.strides, strict=True))
    low = start - sum((n - 1) * -s for n, s in zip(a.shape, a.strides, strict=True) if s < 0)
    return low, low + extent + a.itemsize


def copy_array(dst: Any, dst_dtype: Any, src: Any, src_dtype: Any) -> None:
    """Write device array `src` (runtime dtype `src_dtype`, broadcastable) into device array `dst`."""
    from runtime.cuda.device import require_cupy

    cupy = require_cupy()

    from runtime.cuda.compile import load_function

    if dst.size == 0:
        return
    if any(s < 0 for s in (*dst.strides, *src.strides)):
        raise RuntimeError("copy_: negative strides are not supported by the CUDA backend")
    if _overlaps(dst, src):
        src = cupy.array(src, copy=True)
    device = dst.device.id
    shape = tuple(dst.shape)
    strides = [F.element_strides(dst), broadcast_strides(shape, src.shape, F.element_strides(src))]
    dense = src.shape == dst.shape and all(L.is_contiguous(shape, st) for st in strides)
    mshape, mstrides = L.coalesce(shape, strides)
    numel = math.prod(shape)
    bits = L.index_bits(numel, mshape, mstrides)
    index = F.index_np(bits)
    name = f"copy__{src_dtype.name}__{dst_dtype.name}"
    source = F.source_path(f"cuda/copy/{src_dtype.name}.cu")
    if dense:
        fn = load_function(source, f"{name}__contig{bits}", device)
        F.launch_1d(fn, numel, (index(numel), dst, src), device)
    else:
        fn = load_function(source, f"{name}__strided{bits}", device)
        F.launch_1d(fn, numel, (index(numel), L.pack_strided(mshape, mstrides, bits), dst, src), device)


def copy_(dst: Any, src: Any, non_blocking: bool = False) -> Any:
    """`dst.copy_(src)` for a CUDA `dst`: any strides, any dtypes, `src` on any device. Returns `dst`."""
    from runtime.cuda.device import require_cupy

    cupy = require_cupy()

    from runtime.strides import broadcast_shapes

    if src is dst:
        return dst
    if tuple(broadcast_shapes(tuple(src.shape), tuple(dst.shape))) != tuple(dst.shape):
        raise RuntimeError(f"The size of tensor a ({list(dst.shape)}) must match the size of tensor b "
                           f"({list(src.shape)}) for copy_")
    device = F.device_of(dst)
    with cupy.cuda.Device(device):
        data = src._data
        if src.device.type != "cuda" or F.device_of(src) != device:
            data = cupy.asarray(np.ascontiguousarray(data) if isinstance(data, np.ndarray) else data)
        copy_array(dst._data, dst.dtype, data, src.dtype)
    return dst


def to_dtype(t: Any, dtype: Any) -> Any:
    """A contiguous copy of CUDA tensor `t` in `dtype` (a runtime dtype)."""
    from runtime.cuda.device import require_cupy

    cupy = require_cupy()

    from runtime.tensor import Tensor

    device = F.device_of(t)
    with cupy.cuda.Device(device):
        out = F.empty(tuple(t.shape), dtype, device)
        copy_array(out, dtype, t._data, t.dtype)
    return Tensor._wrap(out, dtype)


def contiguous(t: Any) -> Any:
    """`t`'s data as a contiguous device array (itself when already contiguous)."""
    a = t._data
    if L.is_contiguous(tuple(a.shape), F.element_strides(a)) and all(s >= 0 for s in a.strides):
        return a
    return to_dtype(t, t.dtype)._data


def scalar_bits(value: Any, dtype: Any) -> np.generic:
    """`value` as a kernel argument of the storage type: 16-bit floats as their raw bits."""
    if dtype.name == "bfloat16":
        if _overflows_bfloat16(value):  # as c10's checked conversion of a Scalar
            raise RuntimeError(f"value cannot be converted to type bfloat16 without overflow: {value}")
        f32 = np.array(value, dtype=np.float32)
        u = int(f32.view(np.uint32))
        if math.isnan(float(f32)):
            return np.uint16(0x7FC0)
        return np.uint16(((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF)
    if dtype.name == "float16":
        return np.array(value, dtype=np.float16).view(np.uint16)[()]
    if dtype.name == "bool":
        return np.bool_(bool(value))
    return np.array(value).astype(dtype.np)[()]


def _overflows_bfloat16(value: Any) -> bool:
    """Whether a finite number lies outside bfloat16's range (infinities and NaN convert as they are)."""
    try:
        wide = float(value)
    except OverflowError:  # a Python int past float's range
        return True
    return math.isfinite(wide) and abs(wide) > BFLOAT16_MAX


def fill_(t: Any, value: Any) -> Any:
    """`t.fill_(value)` for a CUDA tensor of any strides. Returns `t`."""
    from runtime.cuda.device import require_cupy

    cupy = require_cupy()

    from runtime.cuda.compile import load_function

    if hasattr(value, "_data"):
        if value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        value = value.item()
    a = t._data
    if a.size == 0:
        return t
    if any(s < 0 for s in a.strides):
        raise RuntimeError("fill_: negative strides are not supported by the CUDA backend")
    device = F.device_of(t)
    shape = tuple(a.shape)
    numel = math.prod(shape)
    mshape, mstrides = L.coalesce(shape, [F.element_strides(a)])
    bits = L.index_bits(numel, mshape, mstrides)
    index = F.index_np(bits)
    source = F.source_path("cuda/fill.cu")
    arg = scalar_bits(value, t.dtype)
    with cupy.cuda.Device(device):
        if L.is_contiguous(shape, F.element_strides(a)):
            fn = load_function(source, f"fill__{t.dtype.name}__contig{bits}", device)
            F.launch_1d(fn, numel, (index(numel), a, arg), device)
        else:
            fn = load_function(source, f"fill__{t.dtype.name}__strided{bits}", device)
            F.launch_1d(fn, numel, (index(numel), L.pack_strided(mshape, mstrides, bits), a, arg), device)
    return t


def arange_length(start: float, end: float, step: float) -> int:
    """PyTorch's element count: ceil((end - start) / step), checked for sign and step != 0."""
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if all(isinstance(v, int) for v in (start, end, step)):
        return max(0, -((start - end) // step))
    return max(0, math.ceil((end - start) / step))


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None, device: int = 0) -> Any:
    """`G.arange(start, end, step, dtype=..., device='cuda:<device>')`: a contiguous CUDA tensor."""
    from runtime.cuda.device import require_cupy

    cupy = require_cupy()

    from runtime import dtypes
    from runtime.cuda.compile import load_function
    from runtime.tensor import Tensor

    if end is None:
        start, end = 0, start
    if dtype is None:
        floating = any(isinstance(v, float) for v in (start, end, step))
        dtype = dtypes.get_default_dtype() if floating else dtypes.int64
    dtype = dtypes.as_dtype(dtype)
    if dtype.name == "bool":
        raise NotImplementedError("\"arange_cuda\" not implemented for 'Bool'")
    n = arange_length(start, end, step)
    with cupy.cuda.Device(device):
        out = F.empty((n,), dtype, device)
        if n:
            bits = L.index_width(n <= L.INT32_LIMIT)
            conv = np.float64 if dtype.is_floating_point else np.int64
            fn = load_function(F.source_path("cuda/fill.cu"), f"arange__{dtype.name}{bits}", device)
            F.launch_1d(fn, n, (F.index_np(bits)(n), out, conv(start), conv(step)), device)
    return Tensor._wrap(out, dtype)
