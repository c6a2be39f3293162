"""Overlap checks before an in-place or `out=` write, with PyTorch's rules and messages.

Note [Overlap checks before a write]
An in-place op or an `out=` form writes into a tensor while reading its inputs. PyTorch refuses two
cases that would make the result depend on the order the elements are visited in:
  - internal overlap: several elements of the written-to tensor are one memory location (an expanded
    tensor, stride 0 over a dimension of size > 1: `zeros(1).expand(3).add_(1)`);
  - partial overlap: an input and the written-to tensor share memory without being the same view
    (`x[1:].add_(x[:-1])`); exactly the same view (`x.add_(x)`) is fine.
As in PyTorch, only what can be decided cheaply is refused: internal overlap means a zero stride, and
partial overlap is reported for two dense (non-overlapping, gap-free) layouts whose byte ranges
intersect; other layouts (`x[::2]` and `x[1::2]`) are let through.
Cost on the hot path: a written-to array that owns its memory (`base is None`: every fresh kernel
output) has no zero stride, and a view is tested for one only when a stride is 0. An input can overlap
the target only if both view the same allocation: NumPy and CuPy point `base` of every view at the array
that owns the memory, so the common case is an identity test; only views of one allocation pay for the
byte-range test. The pointwise kernels' store_inplace/store_out call `check_write` only when the target is
a view or an input views the target, so a write into an array that owns its memory pays two attribute
reads per input. The generated pointwise kernels
(store_inplace/store_out in runtime/kernels/cpu_pointwise.py), copy_ and the CUDA launcher call these.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from runtime import strides as S

INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single "
                    "memory location. Please clone() the tensor before performing the operation.")
PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to "
                   "a single memory location. Please clone() the tensor before performing the operation.")


def has_internal_overlap(array: Any) -> bool:
    """True when some dimension of size > 1 has stride 0 (PyTorch's `has_internal_overlap` == YES)."""
    return any(st == 0 and n > 1 for st, n in zip(array.strides, array.shape, strict=True))


def check_write(target: Any, inputs: Iterable[Any] = ()) -> None:
    """Raise RuntimeError if writing into `target` while reading `inputs` (Tensors) is refused (Note
    [Overlap checks before a write])."""
    data = target._data
    owner = data.base
    if owner is None:
        owner = data
    elif 0 in data.strides and has_internal_overlap(data):
        raise RuntimeError(INTERNAL_OVERLAP)
    for t in inputs:
        other = t._data
        if other is data:
            continue
        other_owner = other.base
        if (other if other_owner is None else other_owner) is not owner:
            continue  # another allocation
        if type(other) is type(data) and _partial_overlap(data, other):
            raise RuntimeError(PARTIAL_OVERLAP)


def _partial_overlap(a: Any, b: Any) -> bool:
    if a.size == 0 or b.size == 0:
        return False
    lo_a, hi_a = _byte_range(a)
    lo_b, hi_b = _byte_range(b)
    if hi_a <= lo_b or hi_b <= lo_a:
        return False
    if lo_a == lo_b and a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype:
        return False  # the same view
    return (S.is_non_overlapping_and_dense(a.shape, a.strides, a.itemsize)
            and S.is_non_overlapping_and_dense(b.shape, b.strides, b.itemsize))


def _byte_range(a: Any) -> tuple[int, int]:
    """[first byte, one past the last byte) that `a` can touch."""
    ptr = int(a.data.ptr) if not isinstance(a, np.ndarray) else int(a.__array_interface__["data"][0])
    lo = hi = ptr
    for n, st in zip(a.shape, a.strides, strict=True):
        if st < 0:
            lo += (n - 1) * st
        else:
            hi += (n - 1) * st
    return lo, hi + a.itemsize
