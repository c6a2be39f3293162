"""Copies of an array laid out as PyTorch lays out an elementwise result (preserve_format): a leaf that
copy.py and the pointwise kernels share (it imports no kernel module, so neither imports the other)."""

from __future__ import annotations

from typing import Any

from runtime import strides as S


def preserved_copy(a: Any) -> Any:
    """A copy of the array `a` laid out as PyTorch lays out an elementwise result of `a` (preserve_format):
    `a`'s own layout when dense (a transposed array stays transposed), else `S.dense_strides_like`."""
    if a.flags.c_contiguous or is_dense(a):
        return a.copy(order="K")
    from runtime.kernels._xp import xp_of

    return dense_copy(a, a.dtype, xp_of(a))


def dense_copy(a: Any, np_dtype: Any, xp: Any) -> Any:
    """A dense copy of `a` in `np_dtype`, its dims in memory in the order of `S.dense_strides_like`."""
    itemsize = a.itemsize
    strides = S.dense_strides_like(a.shape, tuple(step // itemsize for step in a.strides))
    slowest_first = sorted(range(a.ndim), key=lambda d: -strides[d])
    out = xp.empty([a.shape[d] for d in slowest_first], np_dtype)
    out = out.transpose([slowest_first.index(d) for d in range(a.ndim)])
    out[...] = a
    return out


def is_dense(a: Any) -> bool:
    """Whether the array `a`'s elements fill its memory without gaps or overlaps, in some order of its dims."""
    return S.is_non_overlapping_and_dense(a.shape, a.strides, a.itemsize)
