"""Copies of an array laid out as PyTorch lays out an elementwise result (preserve_format), and the layout
of a pointwise result of several arrays (Note [Pointwise output strides]): a leaf that copy.py, the
pointwise kernels and their Meta kernels share (it imports no kernel module, so none imports another)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runtime import strides as S
from runtime.layout import format_strides


def preserved_copy(a: Any) -> Any:
    """A copy of the array `a` laid out as PyTorch lays out an elementwise result of `a` (preserve_format):
    `a`'s own layout when dense (a transposed array stays transposed), else `S.dense_strides_like`."""
    if a.flags.c_contiguous or is_dense(a):
        return a.copy(order="K")
    from runtime.kernels._xp import xp_of

    return dense_copy(a, a.dtype, xp_of(a))


def clone_strides(op: str, a: Any, memory_format: object) -> tuple[int, ...]:
    """The element strides of a copy of the array `a` in `memory_format` (`preserve_format` or None: `a`'s
    own when dense, else `S.dense_strides_like`), as PyTorch's clone lays it out; the CPU and Meta kernels
    of clone both ask this."""
    shape = tuple(a.shape)
    strides = format_strides(op, memory_format, shape)
    if strides is not None:
        return strides
    own = tuple(step // a.itemsize for step in a.strides)
    return own if is_dense(a) else S.dense_strides_like(shape, own)


def copy_with_strides(a: Any, strides: tuple[int, ...]) -> Any:
    """A copy of the array `a` whose element strides are the dense `strides`."""
    from runtime.kernels._xp import xp_of

    if strides == S.contiguous_strides(tuple(a.shape)):
        return a.copy(order="C")
    slowest_first = sorted(range(a.ndim), key=lambda d: -strides[d])
    out = xp_of(a).empty([a.shape[d] for d in slowest_first], a.dtype)
    out = out.transpose([slowest_first.index(d) for d in range(a.ndim)])
    out[...] = a
    return out


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


# Note [Pointwise output strides]
# A pointwise op's output follows its inputs' layout, as PyTorch's TensorIterator lays it out: the dims
# are ordered from the fastest-moving to the slowest by comparing the inputs' strides (broadcast to the
# output's shape), the first input that tells two dims apart deciding; dims no input tells apart keep
# their order. The output is dense in that order: a transposed input gives a transposed output, a
# channels-last one a channels-last output, contiguous inputs a contiguous output. The Meta kernels lay
# their outputs out so (meta_pointwise.output_strides); the CPU kernels compute with NumPy, whose result
# differs where the inputs' layouts differ (NumPy lays `t + c` out row-major, PyTorch as `t`) or an input is
# broadcast (a kernel's `empty_like` of a stride-0 view is column-first), and `laid_out` re-lays those out.
def pointwise_strides(shape: tuple[int, ...], arrays: Sequence[Any]) -> tuple[int, ...]:
    """The element strides of a pointwise result of `shape` computed from `arrays` (NumPy or CuPy arrays;
    Python scalars are skipped)."""
    n = len(shape)
    if n <= 1:
        return S.contiguous_strides(shape)
    arrays = [a for a in arrays if hasattr(a, "strides")]
    if all(a.shape == shape and a.flags.c_contiguous for a in arrays):
        return S.contiguous_strides(shape)
    operand_strides = []  # in bytes, as TensorIterator compares them; 0 along a broadcast dim
    for a in arrays:
        lead = n - a.ndim
        operand_strides.append([0] * lead + [0 if m == 1 and shape[lead + i] != 1 else st
                                             for i, (m, st) in enumerate(zip(a.shape, a.strides, strict=True))])

    def should_swap(d0: int, d1: int) -> int:
        for st in operand_strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    return S.dense_in_order(shape, should_swap)


def laid_out(r: Any, arrays: Sequence[Any]) -> Any:
    """The pointwise result `r` (a new array) laid out as PyTorch lays out the result of `arrays`: `r`
    itself when it already is, else a copy in that layout (Note [Pointwise output strides])."""
    if r.ndim <= 1 or r.size <= 1:
        return r
    shape, steps = r.shape, r.strides
    for a in arrays:  # the common case first: every input laid out as the result, which NumPy then followed
        if getattr(a, "shape", shape) != shape or getattr(a, "strides", steps) != steps:
            break
    else:
        return r
    arrays = [a for a in arrays if hasattr(a, "strides")]
    if r.flags.c_contiguous and all(a.flags.c_contiguous for a in arrays):
        return r  # row-major inputs: PyTorch's result is row-major too
    itemsize = r.itemsize
    mine = tuple(st // itemsize for st in steps)
    want = pointwise_strides(tuple(shape), arrays)
    if all(n == 1 or st == w for n, st, w in zip(shape, mine, want, strict=True)):
        return r
    slowest_first = sorted(range(r.ndim), key=lambda d: -want[d])
    from runtime.kernels._xp import xp_of

    out = xp_of(r).empty([r.shape[d] for d in slowest_first], r.dtype)
    out = out.transpose([slowest_first.index(d) for d in range(r.ndim)])
    out[...] = r
    return out
