"""The evenly spaced factories: arange, linspace (and logspace's checks, runtime/torch_functions.py), on the
allocation path of runtime/factories.py."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from runtime import dtypes, opcall
from runtime.device import META
from runtime.factories import _alloc, _dtype, _finish, _plain_cpu, array_module, store
from runtime.tensor import Tensor

__all__ = ["arange", "linspace", "spaced_bounds", "steps_of"]


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,
           requires_grad: bool = False, out: Any = None) -> Tensor:
    """`arange(end)` or `arange(start, end, step)`: [start, end) in steps; int64 unless a bound is a float."""
    if out is not None:
        return opcall.store_out("arange", arange(start, end, step, dtype=dtype or out.dtype, device=device), out)
    if end is None:
        start, end = 0, start
    if start.__class__ is int and end.__class__ is int and step.__class__ is int:  # the common case
        exact, floats = True, False
    else:
        start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
        floats = any(isinstance(v, float) for v in (start, end, step))
        exact = all(isinstance(v, int) for v in (start, end, step))
    if dtype is None:
        dt = dtypes.get_default_dtype() if floats else dtypes.int64
    else:
        dt = dtypes.as_dtype(dtype)
    count_from: tuple[Any, Any, Any] | None = None
    if floats and not dt.is_floating_point and all(np.isfinite(v) for v in (start, end, step)):
        # an integral dtype takes the start and step in that type first (truncated), as PyTorch does. int64 truncates
        # the end too and counts in integers: arange(1.0, 5.000001, 2.0, dtype=int64) is [1, 3]. The narrower integer
        # types count from the float bounds, ceil((end - start) / step), and the values wrap into the type:
        # arange(0.5, 5.2, 0.7, dtype=int8) is seven zeros.
        if dt not in (dtypes.int64, dtypes.bool_) and dt.np is not None and step != 0:
            count_from = (start, end, step)
        elif dt is dtypes.int64 and step != 0 and int(step) == 0 and (step > 0) == (end >= start):
            # a step that truncates to 0 in a consistent range: PyTorch's binding refuses it as a ValueError
            raise ValueError(f"step must be nonzero: step {step} truncates to 0 in {dt}")
        start, end, step = int(start), int(end), int(step)
        exact, floats = True, False
    if count_from is not None:
        f_start, f_end, f_step = count_from
        if (f_step > 0 and f_start > f_end) or (f_step < 0 and f_start < f_end):
            raise RuntimeError(f"upper bound and larger bound inconsistent with step sign: start={f_start}, "
                               f"end={f_end}, step={f_step}")
        n = max(int(np.ceil((f_end - f_start) / f_step)), 0)
    else:
        if step == 0:
            raise RuntimeError("step must be nonzero")
        if floats and not all(np.isfinite(v) for v in (start, end, step)):
            raise RuntimeError(f"unsupported range: {start} -> {end}")
        if (step > 0 and start > end) or (step < 0 and start < end):
            raise RuntimeError(f"upper bound and larger bound inconsistent with step sign: start={start}, end={end}, "
                               f"step={step}")
        n = max(-((start - end) // step), 0) if exact else max(int(np.ceil((end - start) / step)), 0)
    if dt.np is not None and _plain_cpu(device, None):
        if exact and count_from is not None:  # the step may be 0 after truncation; values wrap into the type
            values = start + np.arange(n, dtype=np.int64) * step
        elif exact:
            values = np.arange(start, start + n * step, step, dtype=np.int64)
        else:
            values = start + np.arange(n, dtype=np.float64) * step
        return _finish(Tensor._wrap(values.astype(dt.np, copy=False), dt), requires_grad)
    t = _alloc((n,), dt, device)
    if t._device.type == "meta":  # no values to compute (Note [Meta tensors] in runtime/meta_array.py)
        return _finish(t, requires_grad)
    xp = array_module(t.device)
    store(t, start + xp.arange(n, dtype=np.int64 if exact else np.float64) * step)
    return _finish(t, requires_grad)



def steps_of(op: str, steps: Any) -> int:
    """`steps` of linspace/logspace: an integer (a float is a TypeError, as PyTorch's binding raises)."""
    if isinstance(steps, bool) or not hasattr(steps, "__index__"):
        raise TypeError(f"{op}(): argument 'steps' must be int, not {type(steps).__name__}")
    return operator.index(steps)


def spaced_bounds(op: str, start: Any, end: Any, device: Any) -> tuple[Any, Any, Any]:
    """The bounds of linspace/logspace as numbers, and the device of the result: 0-dim tensor bounds are
    read, except a bound on 'meta', which has no value and puts the result on 'meta' (as PyTorch's meta
    tensors do; its bounds are then placeholders, Note [Meta tensors] in runtime/meta_array.py)."""
    bounds = []
    for what, value in (("start", start), ("end", end)):
        if isinstance(value, Tensor):
            if value.dim() != 0:
                raise RuntimeError(f"{op} only supports 0-dimensional start and end tensors, but {what} has "
                                   f"{value.dim()} dimensions")
            if value._device.type == "meta":
                device, value = META, 0
            else:
                value = value.item()
        bounds.append(value)
    return bounds[0], bounds[1], device


def linspace(start: float, end: float, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, out: Any = None) -> Tensor:
    """`steps` values evenly spaced from `start` to `end`, both included."""
    if out is not None:
        return opcall.store_out("linspace", linspace(start, end, steps, dtype=dtype or out.dtype, device=device), out)
    start, end, device = spaced_bounds("linspace", start, end, device)
    steps = steps_of("linspace", steps)
    if steps < 0:
        raise RuntimeError("linspace(): number of steps must be non-negative")
    t = _alloc((int(steps),), _dtype(dtype), device)
    if t._device.type == "meta":  # no values to compute
        return _finish(t, requires_grad)
    xp = array_module(t.device)
    if t.dtype.is_floating_point:
        values = xp.linspace(float(start), float(end), int(steps), dtype=np.float64)
    else:
        # integral: the bounds truncated to integers first, then each half stepped from its own end (PyTorch)
        a, b = float(int(start)), float(int(end))
        n = int(steps)
        step = (b - a) / (n - 1) if n > 1 else 0.0
        i = xp.arange(n, dtype=np.float64)
        values = xp.trunc(xp.where(i < n // 2, a + step * i, b - step * (n - 1 - i))) if n > 1 else \
            xp.full(n, a, dtype=np.float64)
    store(t, values)
    return _finish(t, requires_grad)
