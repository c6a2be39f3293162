"""`G.testing.assert_close`, as `torch.testing.assert_close`: tensors (and numbers, sequences and mappings
of them) compared elementwise with dtype-based default tolerances, |actual - expected| <= atol + rtol *
|expected|; a failure says how many elements differ and where the greatest differences are."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from runtime import dtypes
from runtime.tensor import Size, Tensor

__all__ = ["assert_close"]

# (rtol, atol) by dtype, PyTorch's defaults; integers and bool compare exactly
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7)}


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: str | None = None) -> None:
    """Raise AssertionError unless `actual` and `expected` are close (see the module docstring)."""
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.")
    _compare(actual, expected, [], rtol, atol, equal_nan, check_device, check_dtype, check_stride, msg)


def _where(path: list[Any]) -> str:
    return "" if not path else "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in path)


def _compare(actual: Any, expected: Any, path: list[Any], rtol: float | None, atol: float | None,
             equal_nan: bool, check_device: bool, check_dtype: bool, check_stride: bool, msg: str | None) -> None:
    if isinstance(actual, Tensor) and isinstance(expected, Tensor):
        _compare_tensors(actual, expected, path, rtol, atol, equal_nan, check_device, check_dtype, check_stride,
                         msg)
        return
    numbers = (bool, int, float, np.number, np.bool_)
    if isinstance(actual, numbers) and isinstance(expected, numbers):
        _compare_scalars(actual, expected, path, rtol, atol, equal_nan, msg)
        return
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            raise AssertionError(f"The keys of the mappings do not match: {sorted(map(repr, actual))} != "
                                 f"{sorted(map(repr, expected))}.{_where(path)}")
        for k in expected:
            _compare(actual[k], expected[k], path + [k], rtol, atol, equal_nan, check_device, check_dtype,
                     check_stride, msg)
        return
    seq = (list, tuple)
    if isinstance(actual, seq) and isinstance(expected, seq) and not isinstance(actual, Size | str):
        if len(actual) != len(expected):
            raise AssertionError(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}"
                                 f"{_where(path)}")
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _compare(a, e, path + [i], rtol, atol, equal_nan, check_device, check_dtype, check_stride, msg)
        return
    if isinstance(actual, Sequence) and isinstance(expected, Sequence) and actual == expected:
        return
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.")


def _compare_scalars(actual: Any, expected: Any, path: list[Any], rtol: float | None, atol: float | None,
                     equal_nan: bool, msg: str | None) -> None:
    exact = isinstance(actual, bool | int | np.integer | np.bool_) and isinstance(
        expected, bool | int | np.integer | np.bool_)
    r, a = (0.0, 0.0) if exact else (rtol if rtol is not None else 1e-7, atol if atol is not None else 1e-7)
    if exact and rtol is not None and atol is not None:
        r, a = rtol, atol
    x, y = float(actual), float(expected)
    if x == y or (equal_nan and x != x and y != y) or abs(x - y) <= a + r * abs(y):
        return
    if msg is not None:
        raise AssertionError(msg)
    diff = abs(x - y) if not exact else abs(int(actual) - int(expected))
    rel = diff / abs(y) if y else float("inf")
    word = "equal" if exact else "close"
    allowed = ("", "") if exact else (f" (up to {a} allowed)", f" (up to {r} allowed)")
    raise AssertionError(f"Scalars are not {word}!\n\nExpected {expected} but got {actual}.\n"
                         f"Absolute difference: {diff}{allowed[0]}\nRelative difference: {rel}{allowed[1]}"
                         f"{_where(path)}")


def _values(t: Tensor) -> np.ndarray:
    """A tensor's values as a NumPy array (bfloat16, which NumPy lacks, exactly in float32)."""
    t = t.detach()
    return (t.float() if t.dtype is dtypes.bfloat16 else t).numpy(force=True)


def _compare_tensors(actual: Tensor, expected: Tensor, path: list[Any], rtol: float | None, atol: float | None,
                     equal_nan: bool, check_device: bool, check_dtype: bool, check_stride: bool,
                     msg: str | None) -> None:
    for attr, on in (("shape", True), ("device", check_device), ("dtype", check_dtype),
                     ("stride()", check_stride)):
        if not on:
            continue
        name = attr.rstrip("()")
        va = actual.stride() if attr == "stride()" else getattr(actual, attr)
        ve = expected.stride() if attr == "stride()" else getattr(expected, attr)
        if va != ve:
            raise AssertionError(f"The values for attribute '{name}' do not match: {va!r} != {ve!r}."
                                 f"{_where(path)}")
    dt = actual.dtype if actual.dtype is expected.dtype else dtypes.promote_types(actual.dtype, expected.dtype)
    default = _TOLERANCES.get(dt.name, (0.0, 0.0))
    r, a = (rtol, atol) if rtol is not None and atol is not None else default
    x = _values(actual)
    y = _values(expected)
    exact = not dt.is_floating_point
    x64 = x.astype(np.float64)
    y64 = y.astype(np.float64)
    with np.errstate(invalid="ignore"):
        diff = np.abs(x64 - y64)
        ok = (x64 == y64) | (diff <= a + r * np.abs(y64))
    if equal_nan:
        ok |= np.isnan(x64) & np.isnan(y64)
    if bool(ok.all()):
        return
    if msg is not None:
        raise AssertionError(msg)
    bad = ~ok
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = diff / np.abs(y64)
    diff_m = np.where(bad, np.nan_to_num(diff, nan=np.inf), -1.0)
    rel_m = np.where(bad, np.nan_to_num(rel, nan=np.inf), -1.0)
    ia = np.unravel_index(int(np.argmax(diff_m)), x.shape) if x.ndim else ()
    ir = np.unravel_index(int(np.argmax(rel_m)), x.shape) if x.ndim else ()

    def num(v: float) -> str:
        return str(int(v)) if exact and np.isfinite(v) else str(float(v))

    n_bad, n = int(bad.sum()), x.size
    word = "equal" if exact else "close"
    allowed = ("", "") if exact else (f" (up to {a} allowed)", f" (up to {r} allowed)")
    index_a = tuple(int(i) for i in ia)
    index_r = tuple(int(i) for i in ir)
    raise AssertionError(
        f"Tensor-likes are not {word}!\n\nMismatched elements: {n_bad} / {n} ({100 * n_bad / n:.1f}%)\n"
        f"Greatest absolute difference: {num(diff[ia])} at index {index_a}{allowed[0]}\n"
        f"Greatest relative difference: {float(rel[ir])} at index {index_r}{allowed[1]}{_where(path)}")
