"""runtime.dtypes: the promotion table, result_type's tiers, can_cast, conversions and the default dtype.

Expected values are PyTorch's (checked by hand against torch 2.13); no test imports torch.
"""

from __future__ import annotations

import copy
import itertools
import pickle
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runtime import dtypes as D
from runtime.dtypes import (
    ALL_DTYPES,
    bfloat16,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)

INTS = (uint8, int8, int16, int32, int64)
FLOATS = (float16, bfloat16, float32, float64)
PAIRS = list(itertools.product(ALL_DTYPES, repeat=2))


@pytest.fixture(autouse=True)
def _restore_default_dtype():
    saved = D.get_default_dtype()
    yield
    D.set_default_dtype(saved)


class T:
    """A stand-in tensor: result_type only reads `dtype` and `ndim`."""

    def __init__(self, dtype: D.DType, ndim: int = 1):
        self.dtype = dtype
        self.ndim = ndim

    def __repr__(self) -> str:
        return f"T({self.dtype!r}, ndim={self.ndim})"


def scalar(dtype: D.DType) -> T:
    return T(dtype, 0)


# ---------------------------------------------------------------------------------------------------------
# DType objects


def test_all_dtypes_in_pytorch_scalar_type_order():
    names = [d.name for d in ALL_DTYPES]
    assert names == [
        "uint8",
        "int8",
        "int16",
        "int32",
        "int64",
        "float16",
        "float32",
        "float64",
        "bool",
        "bfloat16",
    ]
    assert len(set(ALL_DTYPES)) == len(ALL_DTYPES)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_dtype_attributes_agree_with_numpy(dtype):
    assert repr(dtype) == f"opgen.{dtype.name}"
    if dtype is bfloat16:
        assert dtype.np is None
        assert (dtype.itemsize, dtype.is_floating_point, dtype.is_signed) == (2, True, True)
        return
    info = dtype.np
    assert dtype.itemsize == info.itemsize
    assert dtype.is_floating_point == (info.kind == "f")
    assert dtype.is_signed == (info.kind in "if")
    assert dtype.category == {"b": 0, "u": 1, "i": 1, "f": 2}[info.kind]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_dtype_is_a_singleton(dtype):
    assert copy.copy(dtype) is dtype
    assert copy.deepcopy([dtype])[0] is dtype
    assert pickle.loads(pickle.dumps(dtype)) is dtype
    assert {dtype: 1}[dtype] == 1


def test_dtype_is_immutable():
    with pytest.raises(AttributeError, match="opgen.float32 is immutable"):
        float32.itemsize = 8
    with pytest.raises(AttributeError):
        del float32.name
    with pytest.raises(AttributeError):
        float32.extra = 1
    assert float32 != float64 and float32 == float32


def test_aliases():
    assert D.half is float16 and D.float is float32 and D.double is float64
    assert D.short is int16 and D.int is int32 and D.long is int64


# ---------------------------------------------------------------------------------------------------------
# Conversions


@pytest.mark.parametrize(
    "value, expected",
    [
        (float32, float32),
        ("float32", float32),
        ("float", float32),
        ("double", float64),
        ("half", float16),
        ("long", int64),
        ("int", int32),
        ("short", int16),
        ("bool", bool_),
        ("bool_", bool_),
        ("bfloat16", bfloat16),
        ("opgen.uint8", uint8),
        (np.float16, float16),
        (np.dtype("int8"), int8),
        (np.bool_, bool_),
        (bool, bool_),
        (int, int64),
        (float, float64),  # PyTorch maps the Python type `float` to float64
    ],
)
def test_as_dtype(value, expected):
    assert D.as_dtype(value) is expected


@pytest.mark.parametrize("value", ["float31", "torch.float32", 3, None, complex, np.complex64, object])
def test_as_dtype_rejects(value):
    with pytest.raises(TypeError):
        D.as_dtype(value)


def test_as_dtype_unknown_name_message():
    with pytest.raises(TypeError, match=r"unknown dtype name 'float31'; expected one of \["):
        D.as_dtype("float31")


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d.np is not None], ids=str)
def test_from_numpy_round_trip(dtype):
    assert D.from_numpy(dtype.np) is dtype
    assert D.from_numpy(dtype.np.type) is dtype
    assert D.from_numpy(dtype.np.str) is dtype


@pytest.mark.parametrize("np_dtype", ["complex64", "uint16", "uint64", ">f4", "U3", "datetime64[s]", "O"])
def test_from_numpy_unsupported_names_the_dtype(np_dtype):
    name = str(np.dtype(np_dtype))
    with pytest.raises(TypeError, match=rf"NumPy dtype {re.escape(name)} \(.*\) has no opgen equivalent"):
        D.from_numpy(np_dtype)


def test_from_numpy_not_a_dtype():
    with pytest.raises(TypeError, match="not a NumPy dtype: 'nonsense'"):
        D.from_numpy("nonsense")


# ---------------------------------------------------------------------------------------------------------
# Default dtype


def test_default_dtype_switching():
    assert D.get_default_dtype() is float32
    D.set_default_dtype(float64)
    assert D.get_default_dtype() is float64
    assert D.result_type(T(int32), 1.5) is float64
    D.set_default_dtype("float32")
    assert D.get_default_dtype() is float32
    assert D.result_type(T(int32), 1.5) is float32


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d not in (float32, float64)], ids=str)
def test_default_dtype_only_float32_or_float64(dtype):
    with pytest.raises(TypeError, match=rf"only opgen.float32 and opgen.float64 are supported, got {dtype!r}"):
        D.set_default_dtype(dtype)
    assert D.get_default_dtype() is float32


def test_default_dtype_fixture_restored():
    # runs after test_default_dtype_switching in file order; the autouse fixture restores the state
    assert D.get_default_dtype() is float32


# ---------------------------------------------------------------------------------------------------------
# promote_types: the full table against an independent statement of PyTorch's rules


def _rule_promote(a: D.DType, b: D.DType) -> D.DType:
    """PyTorch's promotion restated as rules (not a table), as an oracle for every pair."""
    if a is b:
        return a
    if a is bool_ or b is bool_:
        return b if a is bool_ else a
    if a.is_floating_point and b.is_floating_point:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize >= b.itemsize else b
    if a.is_floating_point or b.is_floating_point:
        return a if a.is_floating_point else b
    if a.is_signed != b.is_signed:  # uint8 against a signed integer
        signed = a if a.is_signed else b
        return int16 if signed.itemsize == 1 else signed
    return a if a.itemsize >= b.itemsize else b


@pytest.mark.parametrize("a, b", PAIRS, ids=lambda d: d.name)
def test_promotion_table_matches_rules(a, b):
    assert D.promote_types(a, b) is _rule_promote(a, b)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (uint8, int8, int16),
        (uint8, int16, int16),
        (uint8, int64, int64),
        (int8, int16, int16),
        (int32, int64, int64),
        (bool_, uint8, uint8),
        (bool_, int8, int8),
        (bool_, float16, float16),
        (bool_, bfloat16, bfloat16),
        (bool_, bool_, bool_),
        (int64, float16, float16),
        (uint8, bfloat16, bfloat16),
        (int64, bfloat16, bfloat16),
        (float16, bfloat16, float32),
        (bfloat16, float32, float32),
        (float16, float64, float64),
        (int32, float32, float32),
        (int64, float32, float32),
    ],
)
def test_promotion_known_pytorch_results(a, b, expected):
    assert D.promote_types(a, b) is expected
    assert D.promote_types(b, a) is expected


def test_promotion_table_properties():
    for a in ALL_DTYPES:
        assert D.promote_types(a, a) is a
        assert D.promote_types(a, bool_) is a
        assert D.promote_types(a, float64) is float64
    for a, b in PAIRS:
        r = D.promote_types(a, b)
        assert r is D.promote_types(b, a)
        assert D.can_cast(a, r) and D.can_cast(b, r)
        assert r.category == max(a.category, b.category)
        assert D.promote_types(a, r) is r  # idempotent: the result absorbs both inputs
    for a, b, c in itertools.product(ALL_DTYPES, repeat=3):
        left = D.promote_types(D.promote_types(a, b), c)
        assert left is D.promote_types(a, D.promote_types(b, c))


# ---------------------------------------------------------------------------------------------------------
# result_type

RESULT_TYPE_CASES = [
    # tensor-tensor: the table
    ((T(int32), T(int64)), int64),
    ((T(uint8), T(int8)), int16),
    ((T(float16), T(bfloat16)), float32),
    ((T(bool_), T(bool_, 3)), bool_),
    # tensor-scalar: a wrapped number only counts when its category is higher
    ((T(int8), 5), int8),
    ((T(uint8), 1000), uint8),
    ((T(int32), 2.5), float32),
    ((T(float16), 2.5), float16),
    ((T(bfloat16), 1), bfloat16),
    ((T(float64), 1), float64),
    ((T(bool_), 1), int64),
    ((T(bool_), 1.0), float32),
    ((T(bool_), True), bool_),
    ((T(int16), True), int16),
    ((T(uint8), True, 2.0), float32),
    ((5, T(int16)), int16),
    # scalars among themselves: bool < int64 < default float
    ((T(bool_), True, 1), int64),
    ((T(int8), 1, 2.0), float32),
    # 0-d tensors rank between dimensioned tensors and wrapped numbers
    ((T(int32), scalar(int64)), int32),
    ((T(int32), scalar(float64)), float64),
    ((T(float16), scalar(float64)), float16),
    ((T(bfloat16), scalar(float16)), bfloat16),
    ((T(bool_), scalar(int64)), int64),
    ((T(uint8), scalar(int8)), uint8),
    ((T(int8), scalar(float16), scalar(bfloat16)), float32),
    ((T(int8), scalar(int16), scalar(uint8)), int8),
    ((scalar(int8), scalar(uint8)), int16),
    ((scalar(float16), scalar(float64)), float64),
    ((scalar(int32), 2.5), float32),
    ((scalar(float64), 2.5), float64),
    ((scalar(uint8), 300), uint8),
    ((scalar(bool_), 3), int64),
    ((scalar(int64), T(int8)), int8),
    ((scalar(float64), T(int64), 1.5), float64),
    # one operand
    ((T(float16),), float16),
    ((scalar(bfloat16),), bfloat16),
    ((2.0,), float32),
    ((2,), int64),
    ((False,), bool_),
    # Python subclasses of the scalar types are wrapped numbers too
    ((T(int8), np.float64(1.0)), float32),
]


@pytest.mark.parametrize("operands, expected", RESULT_TYPE_CASES, ids=repr)
def test_result_type(operands, expected):
    assert D.result_type(*operands) is expected


def test_result_type_follows_default_dtype():
    D.set_default_dtype(float64)
    assert D.result_type(T(int32), 2.5) is float64
    assert D.result_type(T(float16), 2.5) is float16
    assert D.result_type(scalar(int64), 2.5) is float64
    assert D.result_type(1, 2.5) is float64


def test_result_type_errors():
    with pytest.raises(TypeError, match="at least one operand"):
        D.result_type()
    with pytest.raises(TypeError, match="or a Python bool/int/float, got complex"):
        D.result_type(T(float32), 1j)
    with pytest.raises(TypeError, match="got str"):
        D.result_type(T(float32), "x")


def _reference_result_type(*operands):
    """c10's ResultTypeState restated: promote within each tier, then combine tiers by category."""
    tiers: list[D.DType | None] = [None, None, None]  # dimensioned, 0-d, wrapped
    for op in operands:
        if isinstance(op, T):
            tier, dtype = (0 if op.ndim else 1), op.dtype
        else:
            tier = 2
            dtype = {bool: bool_, int: int64, float: D.get_default_dtype()}[type(op)]
        tiers[tier] = dtype if tiers[tier] is None else D.promote_types(tiers[tier], dtype)
    result = None
    for dtype in tiers:
        if dtype is None:
            continue
        if result is None or dtype.category > result.category:
            result = dtype if result is None else D.promote_types(result, dtype)
        elif result is bool_:
            result = D.promote_types(result, dtype)
    return result


_operand = st.one_of(
    st.builds(T, st.sampled_from(ALL_DTYPES), st.integers(0, 2)),
    st.sampled_from([True, False, 0, 7, -1, 0.5, 2.0]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_operand, min_size=1, max_size=5), st.sampled_from([float32, float64]))
def test_result_type_against_reference(operands, default):
    D.set_default_dtype(default)
    assert D.result_type(*operands) is _reference_result_type(*operands)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(ALL_DTYPES), st.lists(st.integers(0, 3), min_size=1, max_size=4))
def test_result_type_same_dtype_fast_path(dtype, ndims):
    assert D.result_type(*(T(dtype, n) for n in ndims)) is dtype


# ---------------------------------------------------------------------------------------------------------
# can_cast


@pytest.mark.parametrize("a, b", PAIRS, ids=lambda d: d.name)
def test_can_cast_table(a, b):
    # torch.can_cast: refuse floating -> integral/bool and integral -> bool; allow the rest (narrowing too)
    refused = (a.is_floating_point and not b.is_floating_point) or (a is not bool_ and b is bool_)
    assert D.can_cast(a, b) is (not refused)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (float64, float16, True),
        (float32, int64, False),
        (int64, uint8, True),
        (int8, bool_, False),
        (float16, bool_, False),
        (bool_, float16, True),
        (bool_, uint8, True),
        (int64, bfloat16, True),
    ],
)
def test_can_cast_known(a, b, expected):
    assert D.can_cast(a, b) is expected
