"""Argument checks PyTorch makes before a pointwise op runs, shared by the CPU (generated/_cpu_kernels.py)
and CUDA (generated/_cuda_kernels.py, runtime/cuda/pointwise.py) kernels: a condition or mask must be bool,
an `alpha` must suit the result dtype, an integer divisor must not be zero (CPU only)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from runtime import dtypes

__all__ = ["check_alpha", "check_bias_dtype", "check_condition", "check_divisor", "checked_fill_value",
           "check_product_dtype", "check_same_dtype", "check_weight_dtype", "check_zero_dim"]


def check_condition(op: str, name: str, t: Any) -> None:
    """A mask or condition argument must be bool (PyTorch's RuntimeError); `where` also takes uint8, which
    PyTorch accepts with a deprecation warning."""
    dt = t._dtype
    if dt is dtypes.bool_:
        return
    if op == "where" and dt is dtypes.uint8:
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated; use a boolean "
                      "condition instead.", UserWarning, stacklevel=3)
        return
    raise RuntimeError(f"{op} expected {name} to be a boolean tensor, but got a tensor with dtype {dt.name}")


def check_product_dtype(op: str, t: Any, terms: int) -> None:
    """PyTorch's CPU and CUDA matrix products (mm, bmm, addmm, dot and all built on them: matmul, `@`, mv,
    einsum, tensordot ...) have no bool kernel: they refuse bool operands when there are products to add up
    (`terms`: the result's elements times the contracted length); with none, no kernel runs and the result
    is empty or all False, as PyTorch's early returns give it (dot refuses bool always: pass terms=1)."""
    if t._dtype is dtypes.bool_ and terms:
        raise NotImplementedError(f"{op}(): matrix products of bool tensors are not supported (PyTorch has no "
                                  "bool kernel for them); convert the operands with .int() or .float() first")


def check_zero_dim(op: str, t: Any) -> None:
    """A value tensor standing for a scalar (masked_fill's `value`) must be 0-dimensional, as PyTorch's
    in-place kernel, which every form of the op goes through, requires."""
    if t._data.ndim:
        raise RuntimeError(f"{op}_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{t._data.ndim} dimension(s).")


# PyTorch's names of the dtypes in messages that print a C++ scalar type (lerp's dtype check).
_CXX_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool"}


def check_same_dtype(name: str, first: Any, t: Any) -> None:
    """Argument `name` must have the first tensor's dtype (PyTorch's lerp kernels compute in one dtype)."""
    if t._dtype is not first._dtype:
        want, got = (_CXX_NAMES.get(d.name, d.name) for d in (first._dtype, t._dtype))
        raise RuntimeError(f"expected dtype {want} for `{name}` but got dtype {got}")


# PyTorch's ScalarType names (messages of its matmul and loss kernels).
_SCALAR_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                      "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                      "bool": "Bool"}


def _scalar_type(t: Any) -> str:
    return _SCALAR_TYPE_NAMES.get(t._dtype.name, t._dtype.name)


def check_bias_dtype(input: Any, bias: Any) -> None:
    """linear's `bias` must have the input's dtype: PyTorch's addmm(bias, input, weight.t()) refuses it,
    naming the bias `self` and the input `mat2`."""
    if bias is not None and bias._dtype is not input._dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_scalar_type(bias)} and "
                           f"{_scalar_type(input)}")


def check_weight_dtype(input: Any, weight: Any) -> None:
    """A class-weight tensor (nll_loss, cross_entropy with class indices) must have the input's dtype."""
    if weight is not None and weight._dtype is not input._dtype:
        raise RuntimeError(f"expected scalar type {_scalar_type(input)} but found {_scalar_type(weight)}")


def check_alpha(dt: dtypes.DType, alpha: Any) -> None:
    """PyTorch's alpha_check: no floating alpha for integral results, no bool alpha for non-bool results.
    Generated kernels call it only for an alpha that is not a plain int (the default 1 is)."""
    if isinstance(alpha, bool):
        if dt is not dtypes.bool_:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif not dt.is_floating_point and not isinstance(alpha, int | np.integer):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


# PyTorch's C++ names of the dtypes, as its overflow message spells them
_CTYPES = {dtypes.float32: "float", dtypes.float64: "double", dtypes.float16: "c10::Half",
           dtypes.bfloat16: "c10::BFloat16", dtypes.int8: "int8_t", dtypes.uint8: "uint8_t", dtypes.int16: "int16_t",
           dtypes.int32: "int", dtypes.int64: "int64_t"}


def checked_fill_value(dt: dtypes.DType, value: Any) -> Any:
    """PyTorch's checked conversion of a Scalar to `dt` (fill_, full): the value to fill, or RuntimeError
    where it does not fit. Floating: a finite value beyond the largest finite one (inf and nan are kept).
    Integral: outside the range, except that an unsigned type takes an integer down to minus its maximum,
    which wraps around (-1 is 255 in uint8); bool takes anything."""
    if not isinstance(value, int | float | complex | np.number | np.bool_):
        raise TypeError(f"a fill value must be a number or a 0-dim tensor, not {type(value).__name__}")
    if dt is dtypes.bool_ or isinstance(value, bool | np.bool_ | complex | np.complexfloating):
        return value
    if dt.is_floating_point:
        fits = not math.isfinite(value) or abs(value) <= dtypes.finfo(dt).max
    else:
        info = dtypes.iinfo(dt)
        if isinstance(value, float | np.floating):
            fits = math.isfinite(value) and info.min <= value <= info.max
        elif info.min == 0:
            fits = -info.max <= value <= info.max
        else:
            fits = info.min <= value <= info.max
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {_CTYPES[dt]} without overflow")
    if value < 0 and not dt.is_signed and not isinstance(value, float | np.floating):
        return int(value) + dtypes.iinfo(dt).max + 1
    return value


# Note [Integer division by zero]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# PyTorch's CPU kernels of floor_divide, remainder, fmod and div(rounding_mode='trunc'|'floor') refuse an
# integer divisor of zero with RuntimeError("ZeroDivisionError"); NumPy would give 0 and a warning. The
# generated NumPy kernels (templates/cpu_kernels.py.j2, the divisors of kernel_spec.integer_divisors) and
# runtime/kernels/pointwise_ops.div_mode call `check_divisor` only when the computing dtype is integral, so
# floating kernels pay one attribute test. A result with no elements divides nothing, so it is not refused.
# PyTorch's CUDA kernels make no such check (it would cost a device sync per call) and their result is
# unspecified; opgen's CUDA kernels make no check either and give 0 (runtime/cuda/include/opgen_math.cuh).


def check_divisor(divisor: Any, *operands: np.ndarray) -> None:
    """Refuse a zero in an integer `divisor` (array or Python scalar) of a division whose `operands`
    (the arrays it broadcasts) give a non-empty result."""
    zero = bool((divisor == 0).any()) if divisor.__class__ is np.ndarray else divisor == 0
    if zero and math.prod(np.broadcast_shapes(*(a.shape for a in operands))) != 0:
        raise RuntimeError("ZeroDivisionError")
