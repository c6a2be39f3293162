"""Promotion through real ops: every dtype pair, every scalar kind, 0-d tensors; division, comparison, in-place."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import generated as G
from runtime import dtypes

DTYPES = [G.bool, G.uint8, G.int8, G.int16, G.int32, G.int64, G.float16, G.float32, G.float64]


def make(dt: G.dtype, shape: tuple[int, ...] = (2,)) -> G.Tensor:
    return G.ones(*shape, dtype=dt) if shape else G.ones((), dtype=dt)


@pytest.mark.parametrize(("a", "b"), list(itertools.product(DTYPES, DTYPES)), ids=lambda d: d.name)
def test_tensor_tensor_promotion(a: G.dtype, b: G.dtype) -> None:
    expected = G.promote_types(a, b)
    x, y = make(a), make(b)
    assert G.result_type(x, y) is expected
    if expected is not G.bool:
        assert G.add(x, y).dtype is expected and G.mul(x, y).dtype is expected
    assert G.gt(x, y).dtype is G.bool
    assert G.div(x, y).dtype is (expected if expected.is_floating_point else G.float32)
    # a 0-d tensor promotes only across categories
    z = make(b, ())
    zero_d = expected if (b.category > a.category) else a
    if a is G.bool and b is not G.bool:
        zero_d = b
    assert G.result_type(x, z) is zero_d


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("scalar", [True, 2, 2.5], ids=["bool", "int", "float"])
def test_tensor_scalar_promotion(dt: G.dtype, scalar: object) -> None:
    x = make(dt)
    kind = dtypes.bool_ if isinstance(scalar, bool) else dtypes.int64 if isinstance(scalar, int) else G.float32
    if kind.category > dt.category:
        expected = kind if kind is not dtypes.int64 else G.int64
    else:
        expected = dt
    assert G.result_type(x, scalar) is expected
    if expected is not G.bool:
        assert G.mul(x, scalar).dtype is expected
        assert (x * scalar).dtype is expected and (scalar * x).dtype is expected


def test_known_pytorch_cases() -> None:
    u8, i8 = make(G.uint8), make(G.int8)
    assert (u8 + i8).dtype is G.int16
    assert (make(G.int32) + 2.5).dtype is G.float32
    assert (make(G.int32) + make(G.float64, ())).dtype is G.float64
    assert (make(G.float16) + make(G.float64, ())).dtype is G.float16
    assert (make(G.int8) + make(G.int64, ())).dtype is G.int8
    assert (make(G.float32, ()) + make(G.float64, ())).dtype is G.float64
    assert (make(G.bool) + 1).dtype is G.int64
    assert (make(G.int64) / 2).dtype is G.float32 and (G.tensor([3]) / G.tensor([2])).tolist() == [1.5]
    assert (G.tensor([1, 2]) > 1).dtype is G.bool


def test_default_dtype_changes_float_scalars() -> None:
    G.set_default_dtype(G.float64)
    try:
        assert G.tensor([1.0]).dtype is G.float64 and (make(G.int32) * 1.5).dtype is G.float64
        assert G.zeros(1).dtype is G.float64
    finally:
        G.set_default_dtype(G.float32)
    assert G.get_default_dtype() is G.float32


def test_inplace_dtype_mismatch_is_an_error() -> None:
    i = make(G.int64)
    with pytest.raises(RuntimeError, match="result type float32 can't be cast to the desired output type int64"):
        i.add_(make(G.float32))
    f = make(G.float32)
    f.add_(make(G.int64))
    assert f.dtype is G.float32 and f.tolist() == [2.0, 2.0]
    b = make(G.bool)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type bool"):
        b.mul_(2)


def test_broadcast_failure_names_both_shapes() -> None:
    with pytest.raises((RuntimeError, ValueError), match=r"\(2,\s*3\).*\(4,\)|\[2, 3\].*\[4\]"):
        G.add(G.zeros(2, 3), G.zeros(4))
    np.testing.assert_array_equal((G.zeros(2, 3) + G.ones(3)).numpy(), np.ones((2, 3)))


# masked_fill's and index_fill's value tensor stands for a Scalar (PyTorch reads it with `.item()`): it takes
# self's dtype and never promotes it, whatever its own dtype (the `zero_dim` rule of native_functions.yaml).
FILL_VALUES = [(2.5, G.float32), (2.5, G.float64), (7, G.int64), (True, G.bool), (-3, G.int8)]


def _fill_cases(lib: Any = G, device: str = "cpu") -> list[tuple[str, Any]]:
    """masked_fill, index_fill and masked_fill_ of every dtype pair, made with `lib` (opgen or torch)."""
    mask = lib.tensor([True, False, True], device=device)
    index = lib.tensor([0, 2], device=device)
    out = []
    for name in ("int64", "int32", "uint8", "bool", "float32", "float64"):
        x = lib.tensor([1, 0, 3], dtype=getattr(lib, name), device=device)
        for v, vdt in FILL_VALUES:
            value = lib.tensor(v, dtype=getattr(lib, vdt.name), device=device)
            out.append((f"{name}<-{vdt.name}", x.masked_fill(mask, value)))
            out.append((f"{name}<-{vdt.name} index", x.index_fill(0, index, value)))
            y = x.clone()
            y.masked_fill_(mask, value)
            out.append((f"{name}<-{vdt.name} inplace", y))
    return out


def test_fill_value_tensor_keeps_self_dtype_vs_torch() -> None:
    expected = _fill_cases(pytest.importorskip("torch"))
    got = _fill_cases()
    for (name, ours), (_, theirs) in zip(got, expected, strict=True):
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch."), name
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=name)


def test_fill_value_tensor_keeps_self_dtype() -> None:
    x = G.tensor([1, 2, 3])
    r = x.masked_fill(G.tensor([True, False, True]), G.tensor(2.5))
    assert r.dtype is G.int64 and r.tolist() == [2, 2, 2]
    assert G.masked_fill(G.ones(2, dtype=G.bool), G.tensor([True, False]), G.tensor(0.0)).tolist() == [False, True]


@pytest.mark.cuda
@pytest.mark.skipif(not G.cuda.is_available(), reason="needs a CUDA device")
def test_fill_value_tensor_keeps_self_dtype_cuda() -> None:
    for (name, ours), (_, cpu) in zip(_fill_cases(G, "cuda"), _fill_cases(), strict=True):
        assert ours.dtype is cpu.dtype, name
        np.testing.assert_array_equal(ours.cpu().numpy(), cpu.numpy(), err_msg=name)
