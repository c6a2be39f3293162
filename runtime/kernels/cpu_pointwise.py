"""Helpers of the generated NumPy pointwise kernels (generated/_cpu_kernels.py)."""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from runtime import dtypes
from runtime.kernels._xp import wrapped_value as _wrapped_value
from runtime.kernels.dense_copy import laid_out as laid_out
from runtime.memory_overlap import check_write
from runtime.tensor import Tensor
from runtime.vocabulary import PromoteKind, opmath_dtype

# The NumPy dtype a pointwise kernel computes in: half precision computes in float32, as on CUDA (Note
# [Floating dtypes and opmath] in runtime/vocabulary.py).
COMPUTE_NP: dict[dtypes.DType, np.dtype] = {d: np.dtype(opmath_dtype(d.name)) for d in dtypes.ALL_DTYPES
                                            if d.np is not None}

# Note [Pointwise fast path]
# A generated kernel whose tensors all have one dtype `dt` needs no type promotion: the result type is
# `dt` whether or not an operand is a wrapped number (same dtype, same category). If NumPy also computes
# in `dt` (not half precision) and `dt` is one the op accepts, the kernel uses the arrays as they are.
# `fast_dtypes` gives that set per kernel; anything else takes `operands`, the general path.
NATIVE: frozenset[dtypes.DType] = frozenset(d for d, ct in COMPUTE_NP.items() if ct is d.np)


class _Operand:
    """A stand-in tensor of a dtype, for asking dtypes.result_type about dtype and scalar pairs."""

    def __init__(self, dtype: dtypes.DType) -> None:
        self.dtype = dtype
        self.ndim = 1


# Note [Pointwise fast path with scalars]
# A kernel that also promotes over Python scalars (`a * 2.0`) needs no type promotion either when the
# scalars leave the tensors' dtype as it is: a float scalar keeps a floating tensor's dtype, an int one an
# integral or floating one, a bool one any. KEEPS[cls] is the set of dtypes of NATIVE that a scalar of
# exactly class `cls` keeps, computed here from dtypes.result_type itself (the one definition of the rule);
# a generated kernel checks `dt in KEEPS.get(s.__class__, ())` per scalar and otherwise takes `operands`.
KEEPS: dict[type, frozenset[dtypes.DType]] = {
    cls: frozenset(d for d in NATIVE if dtypes.result_type(_Operand(d), sample) is d)
    for cls, sample in ((bool, True), (int, 1), (float, 1.0))
}


# Note [Integer scalars wrap to the dtype]
# A Python int Scalar that stands for a Tensor operand (a wrapped number: `other` of add.Scalar, eq.Scalar,
# bitwise_left_shift.Tensor_Scalar) is converted to an integral kernel's dtype as C converts: modulo
# 2**bits (PyTorch's CPU and CUDA kernels both do: `uint8 + 300` adds 44, `uint8 == -1` compares with
# 255), where NumPy 2 raises OverflowError or compares by value. Another int Scalar (`alpha`, masked_fill's
# `value`) is checked first, as PyTorch checks a Scalar's conversion: out of the dtype's range (an unsigned
# dtype also takes negatives down to -max) is a RuntimeError; inside it, it wraps the same way
# (`add(u8, u8, alpha=-3)` adds 253 * b). An exponent keeps its value (NumPy refuses what overflows).
# The CUDA path wraps too (runtime/cuda/pointwise.py `_scalar_arg`). A value beyond int64 is refused.
_INT_RANGES: dict[dtypes.DType, tuple[int, int, int]] = {
    d: (int(np.iinfo(d.np).min), int(np.iinfo(d.np).max), 8 * d.itemsize)
    for d in dtypes.ALL_DTYPES if d.np is not None and d.np.kind in "iu"
}


def int_scalar(dt: dtypes.DType, value: int) -> int:
    """`value` (a Python int wrapped number) as a kernel computing in `dt` reads it: wrapped into an
    integral `dt`'s range (Note [Integer scalars wrap to the dtype]); unchanged for floating and bool `dt`."""
    limits = _INT_RANGES.get(dt)
    if limits is None or limits[0] <= value <= limits[1]:
        return value
    low, high, bits = limits
    if not -(1 << 63) <= value < (1 << 64):
        raise OverflowError(f"Python integer {value} is out of the range of int64 and uint64")
    wrapped = value % (1 << bits)
    return wrapped - (1 << bits) if low < 0 and wrapped > high else wrapped


def checked_int_scalar(op: str, name: str, dt: dtypes.DType, value: int) -> int:
    """A Python int Scalar that is not a wrapped number (`alpha`, an exponent), converted to an integral
    `dt` with PyTorch's range check (Note [Integer scalars wrap to the dtype])."""
    limits = _INT_RANGES.get(dt)
    if limits is None or limits[0] <= value <= limits[1]:
        return value
    low, high, _ = limits
    if low == 0 and value < 0 and op.startswith("hardtanh"):  # PyTorch's hardtanh refuses; clamp wraps
        raise RuntimeError(f"{op}: cannot do hardtanh on an unsigned type ({dt.name}) with a negative limit "
                           f"({name}={value})")
    if not (low == 0 and -high <= value < 0):
        raise RuntimeError(f"{op}: {name}={value} cannot be converted to {dt.name} without overflow")
    return int_scalar(dt, value)


def fast_dtypes(names: tuple[str, ...] | None, floating_only: bool = False,
                without_bool: bool = False) -> frozenset[dtypes.DType]:
    """The dtypes among `names` (None: all) that a kernel computes in directly (Note [Pointwise fast
    path]): not the integer ones of a `promote: float` op, not bool for a `promote: int` op."""
    return frozenset(d for d in NATIVE if (names is None or d.name in names)
                     and (d.is_floating_point or not floating_only) and not (without_bool and d is dtypes.bool_))


def operands(op: str, promote: str, allowed: tuple[str, ...] | None, tensors: tuple[Tensor, ...],
             scalars: tuple[Any, ...] = (), follow: tuple[int, ...] = ()) -> tuple[Any, ...]:
    """The general path of a pointwise kernel: the result dtype (`result_dtype`) and the tensors' arrays
    cast to the dtype NumPy computes in: `(dtype, array0, array1, ...)`."""
    dt = result_dtype(op, promote, allowed, tensors, scalars, follow)
    ct = COMPUTE_NP[dt]
    return (dt, *[t._data if t._data.dtype is ct else cast_array(t._data, ct) for t in tensors])


def cast_array(a: Any, ct: Any) -> Any:
    """`a` in NumPy type `ct`. A broadcast view (a stride-0 dim, as of `expand`) is cast where it reads and
    broadcast again: NumPy's `astype` would lay out a full copy with the stride-0 dim innermost, and the
    ufunc's result after it too, where PyTorch (and the Meta kernels) lay the result out row-major."""
    if a.ndim > 1 and 0 in a.strides and a.size:
        viewed = tuple(slice(0, 1) if step == 0 else slice(None) for step in a.strides)
        return np.broadcast_to(a[viewed].astype(ct), a.shape)
    return a.astype(ct)


def result_dtype(op: str, promote: str, allowed: tuple[str, ...] | None, tensors: tuple[Tensor, ...],
                 scalars: tuple[Any, ...] = (), follow: tuple[int, ...] = ()) -> dtypes.DType:
    """The dtype a pointwise op computes its result in: PyTorch's promotion over the tensors and the
    `scalars` that take part in it, then `promote`, checked against the dtypes the op accepts (`allowed`).
    `follow`: positions of tensors that take that dtype without taking part in promotion (a `zero_dim`
    value tensor stands for a Scalar: masked_fill of an int64 tensor with a float value stays int64).
    The CPU kernels and the Meta kernels (runtime/kernels/meta_pointwise.py) both ask this function."""
    promoting = tensors if not follow else tuple(t for i, t in enumerate(tensors) if i not in follow)
    if len(promoting) == 1 and not scalars:
        dt = promoting[0]._dtype
    else:
        dt = result_type(*promoting, *scalars)
    if promote == PromoteKind.float and not dt.is_floating_point:
        dt = float_result_type(*tensors, *scalars)
    elif promote == PromoteKind.int and dt is dtypes.bool_:
        dt = dtypes.int64
    if allowed is not None and dt.name not in allowed:
        unsupported(op, dt)
    return dt


def result_type(*operands: Any) -> dtypes.DType:
    """PyTorch's result type of tensors and Python scalars; wrapped-number tensors count as the scalars
    they came from."""
    return dtypes.result_type(*(_wrapped_value(t) if isinstance(t, Tensor) and t._wrapped else t for t in operands))


def float_result_type(*operands: Any) -> dtypes.DType:
    dt = result_type(*operands)
    return dt if dt.is_floating_point else dtypes.get_default_dtype()


def broadcast_error(op: str, *arrays: Any) -> NoReturn:
    """Re-raise NumPy's ValueError (called in an `except ValueError` block) as PyTorch's RuntimeError: the
    broadcasting error naming both shapes, or NumPy's own message (integers to negative integer powers)."""
    import sys

    from runtime.strides import broadcast_shapes
    try:
        broadcast_shapes(*(tuple(a.shape) for a in arrays))
    except RuntimeError as e:
        raise RuntimeError(f"{op}: {e}") from None
    raise RuntimeError(f"{op}: {sys.exc_info()[1]}") from None


def unsupported(op: str, dt: dtypes.DType) -> NoReturn:
    raise NotImplementedError(f"\"{op}\" not implemented for '{dt.name}'")


def store_inplace(op: str, target: Tensor, result: Any, dt: dtypes.DType, inputs: tuple[Any, ...] = ()) -> Tensor:
    """Write an in-place op's result into `target`, as PyTorch checks it (dtype, shape, and Note [Overlap
    checks before a write] against the op's other tensor `inputs`)."""
    if not dtypes.can_cast(dt, target._dtype):
        raise RuntimeError(f"{op}: result type {dt.name} can't be cast to the desired output type "
                           f"{target._dtype.name}")
    if result.shape != target._data.shape:
        raise RuntimeError(f"{op}: output with shape {list(target.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")
    data = target._data
    if data.base is not None:  # Note [Overlap checks before a write]
        check_write(target, inputs)
    else:
        for t in inputs:
            if t._data.base is data:
                check_write(target, inputs)
                break
    data[...] = result
    return target


def store_out(op: str, out: Tensor, result: Any, dt: dtypes.DType, inputs: tuple[Any, ...] = ()) -> Tensor:
    """Write an op's result into `out=`; an `out` of another shape is resized, as PyTorch does (with its
    warning when it had elements). `inputs`: the op's tensor arguments (Note [Overlap checks before a
    write])."""
    if not dtypes.can_cast(dt, out._dtype):
        raise RuntimeError(f"{op}: result type {dt.name} can't be cast to the desired output type "
                           f"{out._dtype.name}")
    if result.shape != out._data.shape:
        if out._data.size != 0:
            import warnings
            warnings.warn(f"{op}: an output with one or more elements was resized since it had shape "
                          f"{list(out.shape)}, which does not match the required output shape "
                          f"{list(result.shape)}.", UserWarning, stacklevel=3)
        out._data = np.empty(result.shape, dtype=out._dtype.np)
        out._storage = None
    else:
        data = out._data
        if data.base is not None:  # as in store_inplace
            check_write(out, inputs)
        else:
            for t in inputs:
                if t._data.base is data:
                    check_write(out, inputs)
                    break
    out._data[...] = result
    return out


# Note [Branch-free where]
# np.where picks each element with a branch: with a condition that changes at random (relu's backward),
# mispredictions make it ~20x slower than a ufunc pass. For large arrays `where` blends the bit patterns
# instead, `(x & m) | (y & ~m)` with m all ones where the condition holds, which picks exactly the same
# values (NaN, inf and -0.0 included) in a few ufunc passes, for bool, integer and float results. Where y
# is all zero bits (0, +0.0, False: relu's backward), x's bits times the condition is the same in one
# product (1.4-1.7x faster than the blend from 16K to 200K float32 elements).
_BLEND_MIN = 4096


def where(cond: Any, x: Any, y: Any) -> Any:
    """np.where(cond, x, y), branch-free for large arrays (Note [Branch-free where])."""
    if cond.__class__ is not np.ndarray or cond.size < _BLEND_MIN:
        return np.where(cond, x, y)
    dt = np.result_type(x, y)
    if dt.kind not in "biuf":
        return np.where(cond, x, y)
    try:
        xb, other = np.asarray(x, dt), np.asarray(y, dt)  # cast to the result dtype, as np.where does
    except (OverflowError, ValueError):
        return np.where(cond, x, y)  # an out-of-range Python number: np.where's own conversion
    bits = np.dtype(f"u{dt.itemsize}")
    other = other.view(bits)
    if not other.ndim and not other and cond.dtype == np.bool_:
        return (xb.view(bits) * cond).view(dt)  # y is all zero bits (relu's backward): one product
    mask = cond.astype(bits)
    np.negative(mask, out=mask)  # 1 -> all ones
    picked = xb.view(bits) & mask
    if other.ndim or other:
        picked = picked | (other & np.invert(mask, out=mask))
    return picked.view(dt)


def erf(x: Any) -> Any:
    from math import erf as _erf
    if np.ndim(x) > 1 and 0 in x.strides:  # np.vectorize would lay a broadcast input's result out column-first
        x = np.ascontiguousarray(x)
    return np.vectorize(_erf, otypes=[x.dtype if x.dtype.kind == "f" else np.float64])(x) if np.ndim(x) else \
        np.asarray(_erf(float(x)), dtype=x.dtype)


def erfc(x: Any) -> Any:
    from scipy.special import erfc as _erfc
    return _erfc(x)


def lgamma(x: Any) -> Any:
    from scipy.special import gammaln
    return gammaln(x)


def sign(x: Any) -> Any:
    """np.sign, and a bool array's own values (PyTorch's sign of bool; NumPy has no bool loop). NaN's sign is
    0, as PyTorch's (0 < x) - (x < 0) gives (so abs's gradient at NaN is 0)."""
    if x.dtype.kind == "b":
        from runtime.kernels.dense_copy import preserved_copy
        return preserved_copy(x)  # laid out as an elementwise result (a transposed input stays transposed)
    out = np.sign(x)
    if x.dtype.kind == "f":
        out = np.where(np.isnan(x), out.dtype.type(0), out)
    return out


def power(a: Any, b: Any) -> Any:
    """`a ** b`; an integer tensor exponent may hold negative values, which give 0 except for the bases 1
    and -1 (PyTorch's integer power). A negative Python int exponent still raises NumPy's ValueError, as
    PyTorch refuses it."""
    try:
        return a ** b
    except ValueError:
        if b.__class__ is not np.ndarray or b.dtype.kind not in "iu":
            raise
        neg = b < 0
        r = a ** np.where(neg, 0, b).astype(b.dtype)
        odd = (b % 2) != 0
        fix = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
        return np.where(neg, fix, r).astype(r.dtype, copy=False)


def _shift_operands(a: Any, b: Any) -> tuple[Any, Any, int, Any]:
    """Both operands as arrays of their common integer dtype, the width in bits, and b read as signed
    (PyTorch reads a shift count through the signed type of the same width)."""
    a, b = np.asarray(a), np.asarray(b)
    dt = np.result_type(a, b)
    a, b = a.astype(dt, copy=False), b.astype(dt, copy=False)
    return a, b, dt.itemsize * 8, b.astype(f"i{dt.itemsize}", copy=False)


def shl(a: Any, b: Any) -> Any:
    """PyTorch's `a << b` on integers: 0 for a negative count or one of at least the width."""
    a, b, bits, count = _shift_operands(a, b)
    ok = (count >= 0) & (count < bits)
    unsigned = np.dtype(f"u{a.dtype.itemsize}")
    r = np.left_shift(a.astype(unsigned), np.where(ok, b, 0).astype(unsigned)).astype(a.dtype)
    return np.where(ok, r, 0).astype(a.dtype, copy=False)


def shr(a: Any, b: Any) -> Any:
    """PyTorch's `a >> b` on integers (arithmetic for signed types): a count out of range shifts every bit
    out, leaving the sign (-1 or 0) of a signed value and 0 of an unsigned one."""
    a, b, bits, count = _shift_operands(a, b)
    limit = bits - 1 if a.dtype.kind == "i" else bits
    ok = (count >= 0) & (count < limit)
    r = np.right_shift(a, np.where(ok, b, 0).astype(a.dtype))
    full = np.where(a < 0, -1, 0) if a.dtype.kind == "i" else 0
    return np.where(ok, r, full).astype(a.dtype, copy=False)


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
