"""Data types and PyTorch's type-promotion rules.

Every dtype is one immutable `DType` instance, compared by identity. Promotion follows PyTorch exactly:
`promote_types` reads one table (data, not branches), and `result_type` layers PyTorch's three priority
tiers (dimensioned tensors > 0-d tensors > wrapped Python numbers) on top of it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

BOOL, INTEGRAL, FLOATING = 0, 1, 2  # DType.category, ordered: a higher category wins in result_type

# The builtins, kept under other names: this module defines PyTorch's aliases `int` and `float`.
_py_int = int
_py_float = float


class DType:
    """One data type. Exactly one instance exists per dtype, so `is` and `==` agree."""

    __slots__ = ("name", "itemsize", "np", "is_floating_point", "is_signed", "category")

    name: str
    itemsize: int
    np: np.dtype | None  # None where NumPy has no such type (bfloat16)
    is_floating_point: bool
    is_signed: bool
    category: int  # BOOL, INTEGRAL or FLOATING

    def __init__(self, name: str, itemsize: int, np_dtype: np.dtype | None, category: int, is_signed: bool):
        for slot, value in (
            ("name", name),
            ("itemsize", itemsize),
            ("np", np_dtype),
            ("is_floating_point", category == FLOATING),
            ("is_signed", is_signed),
            ("category", category),
        ):
            object.__setattr__(self, slot, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"opgen.{self.name} is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"opgen.{self.name} is immutable (cannot delete {name!r})")

    def __repr__(self) -> str:
        return f"opgen.{self.name}"

    # One instance per dtype survives copying and pickling.
    def __reduce__(self) -> str:
        return _PY_NAMES[self.name]

    def __copy__(self) -> DType:
        return self

    def __deepcopy__(self, memo: dict) -> DType:
        return self


uint8 = DType("uint8", 1, np.dtype(np.uint8), INTEGRAL, False)
int8 = DType("int8", 1, np.dtype(np.int8), INTEGRAL, True)
int16 = DType("int16", 2, np.dtype(np.int16), INTEGRAL, True)
int32 = DType("int32", 4, np.dtype(np.int32), INTEGRAL, True)
int64 = DType("int64", 8, np.dtype(np.int64), INTEGRAL, True)
float16 = DType("float16", 2, np.dtype(np.float16), FLOATING, True)
float32 = DType("float32", 4, np.dtype(np.float32), FLOATING, True)
float64 = DType("float64", 8, np.dtype(np.float64), FLOATING, True)
bool_ = DType("bool", 1, np.dtype(np.bool_), BOOL, False)
bfloat16 = DType("bfloat16", 2, None, FLOATING, True)

half = float16
float = float32
double = float64
short = int16
int = int32
long = int64

# PyTorch's ScalarType order (c10/core/ScalarType.h), restricted to the dtypes opgen supports.
ALL_DTYPES: tuple[DType, ...] = (uint8, int8, int16, int32, int64, float16, float32, float64, bool_, bfloat16)

_PY_NAMES = {d.name: ("bool_" if d is bool_ else d.name) for d in ALL_DTYPES}
_ALIASES = {"half": float16, "float": float32, "double": float64, "short": int16, "int": int32, "long": int64}
_BY_NAME: dict[str, DType] = {**{d.name: d for d in ALL_DTYPES}, "bool_": bool_, **_ALIASES}
_BY_NUMPY: dict[np.dtype, DType] = {d.np: d for d in ALL_DTYPES if d.np is not None}
# PyTorch's legacy tensor type names, as `Tensor.type()` returns them ("torch.FloatTensor") and accepts them.
TENSOR_TYPE_NAMES: dict[DType, str] = {
    uint8: "ByteTensor", int8: "CharTensor", int16: "ShortTensor", int32: "IntTensor", int64: "LongTensor",
    float16: "HalfTensor", float32: "FloatTensor", float64: "DoubleTensor", bool_: "BoolTensor",
    bfloat16: "BFloat16Tensor",
}
_BY_TENSOR_TYPE_NAME = {name: d for d, name in TENSOR_TYPE_NAMES.items()}


def tensor_type_name(dtype: DType, device_type: str) -> str:
    """`Tensor.type()`: "torch.FloatTensor", "torch.cuda.LongTensor" (PyTorch's strings, for user code
    that compares them)."""
    return f"torch.{'cuda.' if device_type == 'cuda' else ''}{TENSOR_TYPE_NAMES[dtype]}"


def parse_tensor_type_name(name: str) -> tuple[DType, str] | None:
    """(dtype, device type) of a legacy tensor type name, or None when `name` is not one."""
    for prefix, device_type in (("torch.cuda.", "cuda"), ("torch.", "cpu")):
        if name.startswith(prefix) and name[len(prefix):] in _BY_TENSOR_TYPE_NAME:
            return _BY_TENSOR_TYPE_NAME[name[len(prefix):]], device_type
    return None

# Note [Promotion table]
# PyTorch's promoteTypes table (c10/core/ScalarType.cpp), rows and columns in ALL_DTYPES order.
# Read row `a`, column `b` for promote_types(a, b). The table is symmetric; test_dtypes checks that.
_ABBREV = {"u1": uint8, "i1": int8, "i2": int16, "i4": int32, "i8": int64,
           "f2": float16, "f4": float32, "f8": float64, "b1": bool_, "bf": bfloat16}  # fmt: skip
_TABLE_TEXT = """
      u1 i1 i2 i4 i8 f2 f4 f8 b1 bf
  u1  u1 i2 i2 i4 i8 f2 f4 f8 u1 bf
  i1  i2 i1 i2 i4 i8 f2 f4 f8 i1 bf
  i2  i2 i2 i2 i4 i8 f2 f4 f8 i2 bf
  i4  i4 i4 i4 i4 i8 f2 f4 f8 i4 bf
  i8  i8 i8 i8 i8 i8 f2 f4 f8 i8 bf
  f2  f2 f2 f2 f2 f2 f2 f4 f8 f2 f4
  f4  f4 f4 f4 f4 f4 f4 f4 f8 f4 f4
  f8  f8 f8 f8 f8 f8 f8 f8 f8 f8 f8
  b1  u1 i1 i2 i4 i8 f2 f4 f8 b1 bf
  bf  bf bf bf bf bf f4 f4 f8 bf bf
"""


def _parse_table(text: str) -> dict[tuple[DType, DType], DType]:
    header, *rows = text.strip().splitlines()
    columns = [_ABBREV[c] for c in header.split()]
    table = {}
    for row in rows:
        first, *cells = row.split()
        for column, cell in zip(columns, cells, strict=True):
            table[_ABBREV[first], column] = _ABBREV[cell]
    return table


_PROMOTE: dict[tuple[DType, DType], DType] = _parse_table(_TABLE_TEXT)

_default_dtype: DType = float32


def get_default_dtype() -> DType:
    """The dtype of Python floats and of floating tensors made without a dtype (float32 unless changed)."""
    return _default_dtype


def set_default_dtype(d: Any) -> None:
    """Set the default floating dtype; as in PyTorch, only float32 and float64 are supported."""
    global _default_dtype
    dtype = as_dtype(d)
    if dtype is not float32 and dtype is not float64:
        raise TypeError(f"set_default_dtype: only opgen.float32 and opgen.float64 are supported, got {dtype!r}")
    _default_dtype = dtype


def from_numpy(np_dtype: Any) -> DType:
    """The DType of a NumPy dtype (or anything `numpy.dtype()` accepts); TypeError if opgen lacks it."""
    try:
        key = np.dtype(np_dtype)
    except TypeError as e:
        raise TypeError(f"not a NumPy dtype: {np_dtype!r}") from e
    dtype = _BY_NUMPY.get(key)
    if dtype is None:
        raise TypeError(f"NumPy dtype {key!s} ({key.str}) has no opgen equivalent")
    return dtype


def as_dtype(x: Any) -> DType:
    """Coerce a DType, a name ("float32", "float", "opgen.long"), a NumPy dtype or type, or a Python type.

    Python types map as in PyTorch: `bool` -> bool, `int` -> int64, `float` -> float64 (while the *name*
    "float" is PyTorch's alias for float32).
    """
    if x.__class__ is DType:
        return x
    if isinstance(x, str):
        dtype = _BY_NAME.get(x.removeprefix("opgen."))
        if dtype is None:
            raise TypeError(f"unknown dtype name {x!r}; expected one of {sorted(_BY_NAME)}")
        return dtype
    if x is bool:
        return bool_
    if x is _py_int:
        return int64
    if x is _py_float:
        return float64
    if isinstance(x, np.dtype) or (isinstance(x, type) and issubclass(x, np.generic)):
        return from_numpy(x)
    raise TypeError(f"cannot interpret {x!r} as an opgen dtype")


def promote_types(a: DType, b: DType) -> DType:
    """The smallest dtype both `a` and `b` convert to, per PyTorch's table (e.g. uint8, int8 -> int16)."""
    if a is b:
        return a
    return _PROMOTE[a, b]


def _combine_categories(higher: DType | None, lower: DType | None) -> DType | None:
    """Merge a higher-priority tier with a lower one (c10's combine_categories).

    The lower tier matters only when its category is higher: int32 tensor + 0-d float64 tensor -> float64,
    but int8 tensor + 0-d int64 tensor -> int8."""
    if higher is None:
        return lower
    if lower is None or higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def _wrapped_dtype(x: object) -> DType:
    cls = x.__class__
    if cls is bool:
        return bool_
    if cls is _py_int:
        return int64
    if cls is _py_float:
        return _default_dtype
    # subclasses of bool/int/float (e.g. numpy.float64 is a float subclass, IntEnum members)
    if isinstance(x, bool):
        return bool_
    if isinstance(x, _py_int):
        return int64
    if isinstance(x, _py_float):
        return _default_dtype
    raise TypeError(
        f"result_type: expected a tensor (an object with .dtype and .ndim) or a Python bool/int/float, "
        f"got {cls.__name__}"
    )


def result_type(*operands: Any) -> DType:
    """The dtype an op over `operands` computes in, exactly as `torch.result_type`.

    An operand is a tensor (any object whose `dtype` is a DType; `ndim == 0` makes it a 0-d tensor) or a
    Python bool/int/float (a "wrapped number": bool -> bool, int -> int64, float -> the default dtype).
    Tiers, highest first: dimensioned tensors, 0-d tensors, wrapped numbers. Each tier promotes within
    itself; a lower tier changes the result only when its category (bool < integral < floating) is higher.
    """
    # Fast paths: one operand (a factory's fill value, a wrapped number), or every operand a tensor of
    # one dtype (the common case for every op).
    if len(operands) == 1:
        dtype = getattr(operands[0], "dtype", None)
        return dtype if dtype.__class__ is DType else _wrapped_dtype(operands[0])
    try:
        first = operands[0].dtype
        for op in operands:
            if op.dtype is not first:
                break
        else:
            if first.__class__ is DType:
                return first
    except AttributeError:
        pass  # a wrapped number among the operands
    except IndexError:
        raise TypeError("result_type() needs at least one operand") from None
    dim_result: DType | None = None
    zero_result: DType | None = None
    wrapped_result: DType | None = None
    for op in operands:
        dtype = getattr(op, "dtype", None)
        if dtype.__class__ is DType:
            if op.ndim:
                dim_result = dtype if dim_result is None else promote_types(dim_result, dtype)
            else:
                zero_result = dtype if zero_result is None else promote_types(zero_result, dtype)
        else:
            dtype = _wrapped_dtype(op)
            wrapped_result = dtype if wrapped_result is None else promote_types(wrapped_result, dtype)
    result = _combine_categories(dim_result, _combine_categories(zero_result, wrapped_result))
    return result  # type: ignore[return-value]  # not None: at least one operand was seen


def can_cast(from_: DType, to: DType) -> bool:
    """Whether an op may write a `from_` result into a `to` output (torch.can_cast): never down a category,
    i.e. floating -> integral/bool and integral -> bool are refused; anything within a category is allowed."""
    return from_.category <= to.category


# -- numeric limits (torch.finfo / torch.iinfo) ----------------------------------------------------------
# bfloat16 has float32's exponent and an 8-bit significand: NumPy has no such type, so its limits are data.
_BFLOAT16_LIMITS = {"bits": 16, "eps": 0.0078125, "max": 3.3895313892515355e38, "min": -3.3895313892515355e38,
                    "tiny": 1.1754943508222875e-38, "resolution": 0.01}


class finfo:
    """Machine limits of a floating dtype (the default dtype when none is given), as `torch.finfo`."""

    bits: _py_int
    eps: _py_float
    max: _py_float
    min: _py_float
    tiny: _py_float
    smallest_normal: _py_float
    resolution: _py_float
    dtype: str

    def __init__(self, type: Any = None) -> None:
        d = get_default_dtype() if type is None else as_dtype(type)
        if not d.is_floating_point:
            raise TypeError("opgen.finfo() requires a floating point input type. Use opgen.iinfo to handle "
                            "'opgen.finfo'")
        if d is bfloat16:
            limits = dict(_BFLOAT16_LIMITS)
        else:
            info = np.finfo(d.np)
            limits = {"bits": info.bits, "eps": _py_float(info.eps), "max": _py_float(info.max),
                      "min": _py_float(info.min), "tiny": _py_float(info.smallest_normal),
                      "resolution": 10.0 ** -info.precision}
        limits["smallest_normal"] = limits["tiny"]
        self.__dict__.update(limits, dtype=d.name)

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype, as `torch.iinfo`."""

    bits: _py_int
    max: _py_int
    min: _py_int
    dtype: str

    def __init__(self, type: Any) -> None:
        d = as_dtype(type)
        if d is bool_:
            raise TypeError("opgen.bool is not supported by opgen.iinfo")
        if d.category != INTEGRAL:
            raise TypeError("opgen.iinfo() requires an integer input type. Use opgen.finfo to handle "
                            "'opgen.iinfo'")
        info = np.iinfo(d.np)
        self.__dict__.update(bits=info.bits, max=_py_int(info.max), min=_py_int(info.min), dtype=d.name)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
