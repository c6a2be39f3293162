"""The CPU fast paths of issue 14 give what the general paths give, and step aside when they must.

Factories skip dispatch only while dispatch would reach the default kernels (Note [Factory fast path]);
pointwise kernels skip type promotion only when the scalars keep the tensor's dtype (Note [Pointwise
fast path with scalars]); indexing and views take shortcuts for the common keys and geometries.
PyTorch is the oracle where it is installed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import generated as G
from runtime.dispatcher import dispatcher, exclude_keys, include_keys

torch = pytest.importorskip("torch")

NUMERIC = [G.uint8, G.int8, G.int16, G.int32, G.int64, G.float16, G.float32, G.float64, G.bool]


def _torch_dtype(dt: G.dtype) -> Any:
    return getattr(torch, dt.name)


# -- factories ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dt", NUMERIC, ids=lambda d: d.name)
@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("size", [(4,), (2, 3), ((2, 3),), ([2, 0, 1],), ((),), (np.int64(3),)])
def test_factories_match_pytorch(name: str, size: tuple[Any, ...], dt: G.dtype) -> None:
    t_size = tuple(int(s) if isinstance(s, np.integer) else s for s in size)
    got = getattr(G, name)(*size, dtype=dt)
    want = getattr(torch, name)(*t_size, dtype=_torch_dtype(dt))
    assert got.shape == tuple(want.shape) and got.dtype is dt
    assert got.numel() == 0 or got.stride() == want.stride()  # NumPy gives empty arrays 0 strides
    assert got._version == 0 and got.is_leaf and not got.requires_grad
    if name != "empty":
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "full_like"])
def test_like_factories(name: str) -> None:
    x = G.arange(6, dtype=G.int16).reshape(2, 3)
    args = (7,) if name == "full_like" else ()
    got = getattr(G, name)(x, *args)
    assert got.shape == (2, 3) and got.dtype is G.int16 and got.storage is not x.storage
    if name != "empty_like":
        want = getattr(torch, name)(torch.arange(6, dtype=torch.int16).reshape(2, 3), *args)
        assert got.tolist() == want.tolist()
    f = getattr(G, name)(x, *args, dtype=G.float64, requires_grad=True)
    assert f.dtype is G.float64 and f.requires_grad and f.is_leaf


@pytest.mark.parametrize("value", [2.5, 3, True, -1])
def test_full_infers_the_dtype_of_its_value(value: Any) -> None:
    got, want = G.full((2, 2), value), torch.full((2, 2), value)
    assert got.dtype.name == str(want.dtype).removeprefix("torch.") and got.tolist() == want.tolist()


@pytest.mark.parametrize("args", [(5,), (1, 10, 3), (10, 1, -3), (0.5, 3), (0, 1, 0.1), (True, 5), (-7, 8, 5),
                                  (3, 3), (0, 10**12, 10**11), (2.0, -1.0, -0.25)])
def test_arange_matches_pytorch(args: tuple[Any, ...]) -> None:
    got, want = G.arange(*args), torch.arange(*args)
    assert got.dtype.name == str(want.dtype).removeprefix("torch.")
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("size", [(-1,), (2, -3)])
def test_negative_sizes_are_refused_with_pytorchs_message(size: tuple[int, ...]) -> None:
    for make in (G.zeros, G.ones, G.empty):
        with pytest.raises(RuntimeError, match="negative dimension"):
            make(*size)
    with pytest.raises(RuntimeError, match="negative dimension"):
        G.full(size, 1.0)


def test_factories_requires_grad_needs_a_float_dtype() -> None:
    assert G.zeros(2, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        G.ones(2, dtype=G.int64, requires_grad=True)


@pytest.mark.parametrize(("op", "call"), [
    ("zero_", lambda x: G.zeros(3)), ("zero_", lambda x: G.zeros_like(x)),
    ("fill_.Scalar", lambda x: G.ones(3)), ("fill_.Scalar", lambda x: G.full((3,), 2.0)),
    ("fill_.Scalar", lambda x: G.ones_like(x)), ("fill_.Scalar", lambda x: G.full_like(x, 2.0)),
])
def test_a_fill_kernel_registered_at_run_time_serves_the_factories(op: str, call: Any) -> None:
    seen = []

    def mine(self: Any, *args: Any) -> Any:
        seen.append(op)
        self._data[...] = 42
        return self

    x = G.empty(3)
    undo = dispatcher.register(op, "CPU", mine)
    try:
        assert call(x).tolist() == [42.0] * 3 and seen == [op]
    finally:
        undo()
    assert call(x).tolist() != [42.0] * 3


def test_an_empty_strided_kernel_registered_at_run_time_serves_every_factory() -> None:
    seen = []
    default = dispatcher.find("empty_strided").kernels["CPU"]

    def mine(*args: Any) -> Any:
        seen.append(args[0])
        return default(*args)

    undo = dispatcher.register("empty_strided", "CPU", mine)
    try:
        G.empty(2), G.zeros(3), G.ones(4), G.full((5,), 1.0), G.arange(6), G.empty_like(G.tensor([1.0]))
    finally:
        undo()
    assert [tuple(s) for s in seen] == [(2,), (3,), (4,), (5,), (6,), (1,)]


def test_factories_dispatch_when_a_key_is_included() -> None:
    calls = []

    def fallback(op: Any, args: list[Any]) -> Any:
        calls.append(op.name)
        with exclude_keys("Tracer"):
            return op.call(*args)

    undo = dispatcher.register_fallback("Tracer", fallback)
    try:
        with include_keys("Tracer"):
            assert G.zeros(2).tolist() == [0.0, 0.0]
    finally:
        undo()
    assert "empty_strided" in calls


# -- pointwise kernels with Python scalars -------------------------------------------------------------
SCALAR_OPS = ["add", "sub", "mul", "div", "remainder", "pow", "eq", "lt"]


# (PyTorch refuses `sub` with a bool scalar, opgen computes it: a gap outside these fast paths.)
@pytest.mark.parametrize("dt", [d for d in NUMERIC if d is not G.bool], ids=lambda d: d.name)
@pytest.mark.parametrize(("op", "scalar"), [
    pytest.param(op, s, id=f"{op}-{name}") for op in SCALAR_OPS
    for s, name in ((True, "bool"), (3, "int"), (2.5, "float"), (np.float64(1.5), "np.float64"))
    if not (op == "sub" and s is True)])
def test_tensor_scalar_ops_match_pytorch(op: str, scalar: Any, dt: G.dtype) -> None:
    data = np.array([1, 2, 5], dtype=dt.np)
    fn = getattr(G, op)
    t_scalar = float(scalar) if isinstance(scalar, np.floating) else scalar
    try:
        want = getattr(torch, op)(torch.from_numpy(data), t_scalar)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            fn(G.tensor(data), scalar)
        return
    got = fn(G.tensor(data), scalar)
    assert got.dtype.name == str(want.dtype).removeprefix("torch."), (op, dt, scalar)
    np.testing.assert_allclose(got.numpy().astype(np.float64), want.numpy().astype(np.float64), rtol=1e-3)


def test_scalar_fast_path_rule_is_pytorchs() -> None:
    from runtime import dtypes
    from runtime.kernels.cpu_pointwise import KEEPS
    for cls, sample in ((bool, True), (int, 3), (float, 2.5)):
        for dt in [d for d in NUMERIC if d is not G.float16]:
            x = torch.ones(2, dtype=_torch_dtype(dt))
            keeps = torch.result_type(x, sample) == x.dtype
            assert (dtypes.as_dtype(dt.name) in KEEPS[cls]) is keeps, (cls, dt)
