"""Refusals and results side by side with PyTorch (the oracle) where a PyTorch program
meets them: integer division by zero, masked_fill's value, same-dtype operands, dtype of linear's bias
and cross-entropy's weight. The torch-free half is tests/ops/test_refusals.py."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

import generated as G

torch = pytest.importorskip("torch")


def _outcome(call: Callable[[], Any]) -> tuple[str, str]:
    """The exception (type name, message's first line) a call raises, or its result's dtype and values
    (NaN written as a string, so two NaN compare equal)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = call()
        except Exception as e:  # the type is what is compared
            return type(e).__name__, (str(e).splitlines() or [""])[0]
    return str(r.dtype).rpartition(".")[2], repr(r.tolist())


def _same(case: Callable[[Any], Any], message: str) -> None:
    """opgen raises what torch raises, with torch's message where it contains `message` (other refusals
    only by type: opgen names dtypes its own way), or returns what torch returns."""
    ours, theirs = _outcome(lambda: case(G)), _outcome(lambda: case(torch))
    if theirs[0].endswith("Error") and message not in theirs[1]:
        ours, theirs = ours[:1], theirs[:1]
    assert ours == theirs, f"opgen {ours!r}; torch {theirs!r}"


# -- integer division by zero ------------------------------------------------------------------------
DIVISIONS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "//": lambda T, x, d: x // d,
    "%": lambda T, x, d: x % d,
    "floor_divide": lambda T, x, d: T.floor_divide(x, d),
    "remainder": lambda T, x, d: T.remainder(x, d),
    "fmod": lambda T, x, d: T.fmod(x, d),
    "div trunc": lambda T, x, d: T.div(x, d, rounding_mode="trunc"),
    "div floor": lambda T, x, d: T.div(x, d, rounding_mode="floor"),
    "div": lambda T, x, d: T.div(x, d),
    "floor_divide_": lambda T, x, d: x.clone().floor_divide_(d),
    "remainder_": lambda T, x, d: x.clone().remainder_(d),
    "fmod_": lambda T, x, d: x.clone().fmod_(d),
    "fmod out": lambda T, x, d: T.fmod(x, d, out=T.empty(2, 2, dtype=x.dtype)),
}
DIVISORS: dict[str, Callable[[Any, Any], Any]] = {
    "0": lambda T, dt: 0,
    "0.0": lambda T, dt: 0.0,
    "3": lambda T, dt: 3,
    "tensor with a zero": lambda T, dt: T.tensor([[2, 0], [1, 3]], dtype=dt),
    "row with a zero": lambda T, dt: T.tensor([0, 3], dtype=dt),
    "0-d zero": lambda T, dt: T.tensor(0, dtype=dt),
    "float zero tensor": lambda T, dt: T.zeros(2),
    "no zero": lambda T, dt: T.tensor([[2, 4], [1, 3]], dtype=dt),
}  # non-negative, so that every dtype holds them; negative operands: tests/ops/test_refusals.py


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
@pytest.mark.parametrize("divisor", sorted(DIVISORS))
@pytest.mark.parametrize("op", sorted(DIVISIONS))
def test_integer_division_by_zero_as_torch(op: str, divisor: str, dtype: str) -> None:
    def case(T: Any) -> Any:
        dt = getattr(T, dtype)
        return DIVISIONS[op](T, T.tensor([[7, 5], [3, 1]], dtype=dt), DIVISORS[divisor](T, dt))

    _same(case, "ZeroDivisionError")


def test_integer_division_of_nothing_by_zero_as_torch() -> None:
    _same(lambda T: T.empty(0, dtype=T.int64) // 0, "ZeroDivisionError")
    _same(lambda T: T.empty(0, 3, dtype=T.int64) % T.tensor([1, 0, 2]), "ZeroDivisionError")
    _same(lambda T: T.fmod(T.tensor([1, 2]), T.zeros(0, 2, dtype=T.int64)), "ZeroDivisionError")


# -- value tensors standing for a scalar ----------------------------------------------------------------
VALUE_FILLS: dict[str, Callable[[Any, Any], Any]] = {
    "masked_fill": lambda T, v: T.arange(4.0).masked_fill(T.arange(4.0) > 1, v),
    "masked_fill_": lambda T, v: T.arange(4.0).masked_fill_(T.arange(4.0) > 1, v),
    "masked_fill broadcast mask": lambda T, v: T.zeros(2, 4).masked_fill(T.arange(4.0) > 1, v),
    "index_fill": lambda T, v: T.zeros(3, 2).index_fill(0, T.tensor([0, 2]), v),
    "index_fill_": lambda T, v: T.zeros(3, 2).index_fill_(1, T.tensor([1]), v),
}


@pytest.mark.parametrize("shape", [(), (1,), (4,), (1, 1), (2, 4)])
@pytest.mark.parametrize("op", sorted(VALUE_FILLS))
def test_value_tensor_dimensions_as_torch(op: str, shape: tuple[int, ...]) -> None:
    _same(lambda T: VALUE_FILLS[op](T, T.full(shape, 7.0)), "only supports a 0-dimensional value tensor")


# -- operands that must share a dtype --------------------------------------------------------------------
SAME_DTYPE: dict[str, Callable[[Any, Any, Any], Any]] = {
    "lerp end": lambda T, a, b: T.lerp(a, b, 0.5),
    "lerp weight": lambda T, a, b: T.lerp(a, a, b),
    "lerp end and weight": lambda T, a, b: T.lerp(a, b, b),
    "lerp_ end": lambda T, a, b: a.clone().lerp_(b, 0.25),
    "lerp_ weight": lambda T, a, b: a.clone().lerp_(a * 2, b),
    "lerp 0-d end": lambda T, a, b: T.lerp(a, b.sum(), 0.5),
    "lerp 0-d weight": lambda T, a, b: T.lerp(a, a * 2, b.sum()),
    "lerp 0-d self": lambda T, a, b: T.lerp(a.sum(), b, b),
    "addcmul": lambda T, a, b: T.addcmul(a, b, a),
    "addcdiv": lambda T, a, b: T.addcdiv(a, a, b + 1),
    "where": lambda T, a, b: T.where(a > 0, a, b),
}


@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("float64", "float32"), ("float32", "float16"),
                                    ("float32", "int64"), ("float64", "float64")])
@pytest.mark.parametrize("op", sorted(SAME_DTYPE))
def test_same_dtype_operands_as_torch(op: str, dtypes: tuple[str, str]) -> None:
    def case(T: Any) -> Any:
        return SAME_DTYPE[op](T, T.ones(3) * 0.5 if dtypes[0] == "float32" else T.ones(3, dtype=T.float64) * 0.5,
                              T.ones(3, dtype=getattr(T, dtypes[1])))

    _same(case, "expected dtype")


# -- linear's bias and a loss's class weight ---------------------------------------------------------------
def _F(T: Any) -> Any:
    if T is torch:
        return torch.nn.functional
    from runtime.nn import functional
    return functional


WEIGHTED: dict[str, Callable[[Any, Any], Any]] = {
    "linear bias": lambda T, dt: _F(T).linear(T.ones(2, 3), T.ones(4, 3), T.ones(4, dtype=dt)),
    "linear 1-d input": lambda T, dt: _F(T).linear(T.ones(3), T.ones(4, 3), T.ones(4, dtype=dt)),
    "linear 3-d input": lambda T, dt: _F(T).linear(T.ones(2, 2, 3), T.ones(4, 3), T.ones(4, dtype=dt)),
    "linear float64 input": lambda T, dt: _F(T).linear(T.ones(2, 3, dtype=T.float64), T.ones(4, 3, dtype=T.float64),
                                                       T.ones(4, dtype=dt)),
    "cross_entropy": lambda T, dt: _F(T).cross_entropy(T.ones(2, 4), T.tensor([0, 3]), weight=T.ones(4, dtype=dt)),
    "cross_entropy smoothed": lambda T, dt: _F(T).cross_entropy(T.ones(2, 4), T.tensor([0, 3]),
                                                                weight=T.ones(4, dtype=dt), label_smoothing=0.2),
    "cross_entropy probabilities": lambda T, dt: _F(T).cross_entropy(T.ones(2, 4), T.full((2, 4), 0.25),
                                                                     weight=T.ones(4, dtype=dt)),
    "nll_loss": lambda T, dt: _F(T).nll_loss(T.ones(2, 4), T.tensor([0, 3]), T.ones(4, dtype=dt)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
@pytest.mark.parametrize("op", sorted(WEIGHTED))
def test_bias_and_class_weight_dtype_as_torch(op: str, dtype: str) -> None:
    ours = _outcome(lambda: WEIGHTED[op](G, getattr(G, dtype)))
    theirs = _outcome(lambda: WEIGHTED[op](torch, getattr(torch, dtype)))
    if theirs[0].endswith("Error"):
        assert ours == theirs
    else:
        assert ours[0] == theirs[0]  # the dtype (values: a float16 sum may round differently)


# Note [Integer scalars wrap to the dtype] (runtime/kernels/cpu_pointwise.py): a Python int operand out of an
# integer dtype's range wraps as C converts (NumPy 2 raised OverflowError, or compared by value); `alpha`
# and masked_fill's value are range-checked first.
_INT_SCALAR_CASES: dict[str, Callable[[Any, Any], Any]] = {
    "add_300": lambda M, x: x + 300,
    "sub_300": lambda M, x: x - 300,
    "mul_1000": lambda M, x: x * 1000,
    "mul_inplace": lambda M, x: x.clone().mul_(300),
    "add_alpha_neg": lambda M, x: M.add(x, x, alpha=-3),
    "eq_neg1": lambda M, x: x == -1,
    "lt_neg1": lambda M, x: x < -1,
    "ge_300": lambda M, x: x >= 300,
    "remainder_300": lambda M, x: M.remainder(x, 300),
    "floor_divide_300": lambda M, x: M.floor_divide(x, 300),
    "lshift_300": lambda M, x: x << 300,
    "clamp_min_neg1": lambda M, x: M.clamp(x, min=-1),
    "clamp_max_neg3_inplace": lambda M, x: x.clone().clamp_(max=-3),
    "clamp_min_fn_neg1": lambda M, x: M.clamp_min(x, -1),
}


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32"])
@pytest.mark.parametrize("case", sorted(_INT_SCALAR_CASES))
def test_int_scalar_out_of_dtype_range_wraps_as_torch(case: str, dtype: str) -> None:
    def run(M: Any) -> tuple[str, str]:
        values = [1, 2, 100, 127] if dtype == "int8" else [1, 2, 100, 255]
        x = M.tensor(values, dtype=getattr(M, dtype))
        return _outcome(lambda: _INT_SCALAR_CASES[case](M, x))
    assert run(G) == run(torch)


@pytest.mark.parametrize("case", ["sub_alpha_300", "masked_fill_300", "clamp_max_300", "clamp_min_2**40"])
def test_int_scalar_out_of_range_refused_as_torch(case: str) -> None:
    def run(M: Any) -> Any:
        x = M.tensor([1, 2, 255], dtype=M.uint8)
        return {"sub_alpha_300": lambda: M.sub(x, x, alpha=300),
                "masked_fill_300": lambda: x.masked_fill(x > 1, 300),
                "clamp_max_300": lambda: M.clamp(x, max=300),
                "clamp_min_2**40": lambda: M.clamp(x, min=2**40)}[case]()
    with pytest.raises(RuntimeError):
        run(torch)
    with pytest.raises(RuntimeError, match="without overflow"):
        run(G)
