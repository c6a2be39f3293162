"""The CPU fast paths give what the general paths give, and step aside when they must.

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


# -- indexing and views --------------------------------------------------------------------------------
def _same(got: Any, want: Any) -> None:
    assert got.shape == tuple(want.shape) and got.stride() == want.stride()
    np.testing.assert_array_equal(got.numpy(), want.numpy())


KEYS = [1, -1, 3, slice(1, 3), slice(None, 2), slice(-3, None), slice(0, 4, 2), None, Ellipsis, (1, 2), (-1, -2),
        (Ellipsis, 1), (None, 1), (slice(1, 3), None, 0), (1, Ellipsis, None), (None, Ellipsis, None),
        (slice(None), slice(1, 2), 1), ()]


@pytest.mark.parametrize("key", KEYS, ids=repr)
@pytest.mark.parametrize("layout", ["contiguous", "permuted", "sliced"])
def test_basic_indexing_matches_pytorch(key: Any, layout: str) -> None:
    base, tbase = G.arange(60.0).reshape(4, 3, 5), torch.arange(60.0).reshape(4, 3, 5)
    if layout == "permuted":
        base, tbase = base.permute(2, 0, 1), tbase.permute(2, 0, 1)
    elif layout == "sliced":
        base, tbase = base[:, :, 1:], tbase[:, :, 1:]
    got = base[key]
    _same(got, tbase[key])
    assert got.storage is base.storage


@pytest.mark.parametrize("key", [4, -5, (0, 3), (1, 2, 5, 0), slice(0, 2, 0), slice(0, 2, -1), 1.0], ids=repr)
def test_bad_basic_keys_raise_as_pytorch(key: Any) -> None:
    x, tx = G.zeros(4, 3), torch.zeros(4, 3)
    with pytest.raises(Exception) as want:
        tx[key]
    with pytest.raises(type(want.value)):
        x[key]


@pytest.mark.parametrize("key", [1, -1, slice(1, 3), None, (Ellipsis, 1), (1, 2), (slice(None), 0)], ids=repr)
@pytest.mark.parametrize("value", [0.5, "tensor"])
def test_basic_assignment_matches_pytorch(key: Any, value: Any) -> None:
    x, tx = G.arange(12.0).reshape(4, 3), torch.arange(12.0).reshape(4, 3)
    v, tv = (G.tensor(7.0), torch.tensor(7.0)) if value == "tensor" else (value, value)
    version = x._version
    x[key] = v
    tx[key] = tv
    np.testing.assert_array_equal(x.numpy(), tx.numpy())
    assert x._version > version


def test_indexing_records_autograd_through_the_fast_paths() -> None:
    x, tx = G.arange(12.0).reshape(4, 3).requires_grad_(), torch.arange(12.0).reshape(4, 3).requires_grad_()
    for t in (x, tx):
        y = t[1] * 2 + t[1:3].sum(0) + t[None][0, 2] + t[..., 1].sum() + t[2, 1]
        y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


VIEW_CASES = [
    lambda t: t.view(6, 10), lambda t: t.view(-1), lambda t: t.view(2, -1, 5), lambda t: t.view(4, 1, 15),
    lambda t: t.reshape(12, 5), lambda t: t.reshape(-1, 3), lambda t: t.permute(2, 0, 1), lambda t: t.permute(-1, 0, 1),
    lambda t: t.transpose(0, 2), lambda t: t.unsqueeze(0), lambda t: t.unsqueeze(-1), lambda t: t.unsqueeze(2),
    lambda t: t.unsqueeze(1).squeeze(1), lambda t: t.unsqueeze(-1).squeeze(), lambda t: t.squeeze(0),
    lambda t: t.narrow(1, 1, 2), lambda t: t.narrow(-1, -3, 3), lambda t: t.narrow(0, 0, 0), lambda t: t.flatten(),
    lambda t: t.flatten(1), lambda t: t[:1].expand(3, 3, 5), lambda t: t.unsqueeze(0).expand(2, 4, 3, 5),
    lambda t: t[:1].expand(3, -1, 5), lambda t: t[:, :1].expand(-1, 4, -1), lambda t: t[:1, :1].expand(0, 2, 5),
    lambda t: t.expand(4, 3, 5), lambda t: t[:1].expand((2, 3, 5)), lambda t: t.transpose(-1, 0),
    lambda t: t.transpose(1, 1), lambda t: t.permute((1, 2, 0)), lambda t: t.permute([-3, -1, -2]),
    lambda t: t.view((60,)), lambda t: t.view([5, 12]), lambda t: t.reshape(3, -1, 4),
]


@pytest.mark.parametrize("case", range(len(VIEW_CASES)))
@pytest.mark.parametrize("layout", ["contiguous", "permuted", "empty"])
def test_views_match_pytorch(case: int, layout: str) -> None:
    fn = VIEW_CASES[case]
    shape = (4, 3, 5) if layout != "empty" else (4, 0, 5)
    x, tx = G.arange(float(np.prod(shape))).reshape(shape), torch.arange(float(np.prod(shape))).reshape(shape)
    if layout == "permuted":
        x, tx = x.permute(2, 1, 0).contiguous().permute(2, 1, 0), tx.permute(2, 1, 0).contiguous().permute(2, 1, 0)
    try:
        want = fn(tx)
    except (RuntimeError, IndexError) as e:
        with pytest.raises(type(e)):
            fn(x)
        return
    got = fn(x)
    assert got.shape == tuple(want.shape)
    if got.numel():
        assert got.stride() == want.stride()
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("bad", [
    lambda t: t.view(-2, 30), lambda t: t.view(-1, -1), lambda t: t.view(7, -1), lambda t: t.permute(0, 0, 1),
    lambda t: t.permute(0, 1), lambda t: t.unsqueeze(4), lambda t: t.squeeze(3), lambda t: t.narrow(0, 3, 2),
    lambda t: t.narrow(3, 0, 1), lambda t: t.narrow(0, -5, 1), lambda t: t.reshape(7, 7), lambda t: t.expand(4, 4, 5),
    lambda t: t.view(-3, 15), lambda t: t.view(2, -2, 15), lambda t: t.transpose(0, 3), lambda t: t.transpose(-4, 1),
    lambda t: t.permute(None), lambda t: t.permute(0, 1, 3), lambda t: t.permute(0, 1, 2, 3),
    lambda t: t.expand(4, 3, -2), lambda t: t[:1].expand(4, 3, 6),
    lambda t: t.expand(-1, 4, 3, 5), lambda t: t.expand(4, 3),
])
def test_bad_views_raise_pytorchs_error_types(bad: Any) -> None:
    x, tx = G.zeros(4, 3, 5), torch.zeros(4, 3, 5)
    with pytest.raises(Exception) as want:
        bad(tx)
    with pytest.raises(type(want.value)):
        bad(x)


# -- branch-free where (Note [Branch-free where]) -------------------------------------------------------
@pytest.mark.parametrize("dt", NUMERIC, ids=lambda d: d.name)
def test_large_where_and_relu_backward_match_pytorch_bit_for_bit(dt: G.dtype) -> None:
    rng = np.random.default_rng(0)
    n = 3 * 4096
    cond = rng.random(n) > 0.5
    if dt is G.bool:
        a, b = rng.random(n) > 0.5, rng.random(n) > 0.2
    elif dt.is_floating_point:
        a = rng.standard_normal(n).astype(dt.np)
        a[:6] = [np.nan, -0.0, np.inf, -np.inf, 0.0, -np.nan]
        b = rng.standard_normal(n).astype(dt.np)
    else:
        a, b = rng.integers(0, 100, n).astype(dt.np), rng.integers(0, 100, n).astype(dt.np)
    got = G.where(G.tensor(cond), G.tensor(a), G.tensor(b)).numpy()
    want = torch.where(torch.from_numpy(cond), torch.from_numpy(a), torch.from_numpy(b)).numpy()
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    if dt.is_floating_point:
        x = G.tensor(b, requires_grad=True)
        tx = torch.from_numpy(b.copy()).requires_grad_()
        x.relu().backward(G.tensor(a))
        tx.relu().backward(torch.from_numpy(a))
        assert x.grad.numpy().tobytes() == tx.grad.numpy().tobytes()


def test_where_blend_casts_as_numpy_does() -> None:
    from runtime.kernels.cpu_pointwise import where
    rng = np.random.default_rng(1)
    cond = rng.random((64, 100)) > 0.5
    for x, y in [(rng.standard_normal((64, 1)), rng.standard_normal((1, 100)).astype(np.float32)),
                 (rng.integers(-9, 9, (64, 100)), rng.integers(-9, 9, 100).astype(np.int8)), (1.5, 2),
                 (rng.standard_normal(100).astype(np.float16), -0.0), (rng.random(100) > 0.5, False),
                 # y all zero bits: the one-product form (x broadcast, NaN and -0.0 kept where picked)
                 (np.array([np.nan, -0.0, np.inf, 1.5] * 25, np.float32), 0), (rng.standard_normal((64, 1)), 0.0),
                 (2.5, 0), (rng.integers(-9, 9, (64, 100)).astype(np.int16), 0)]:
        got, want = where(cond, x, y), np.where(cond, x, y)
        assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


def test_views_of_a_0d_tensor_match_pytorch() -> None:
    x, tx = G.tensor(3.0), torch.tensor(3.0)
    for fn in (lambda t: t.transpose(0, -1), lambda t: t.permute(()), lambda t: t.expand(()),
               lambda t: t.expand(2, 3), lambda t: t.view(1, 1), lambda t: t.view(-1)):
        got, want = fn(x), fn(tx)
        assert got.shape == tuple(want.shape) and got.stride() == want.stride()
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    for bad in (lambda t: t.transpose(0, 1), lambda t: t.permute(0), lambda t: t.view(2)):
        with pytest.raises(Exception) as want_error:
            bad(tx)
        with pytest.raises(type(want_error.value)):
            bad(x)


def test_expanded_views_share_storage_and_record_autograd() -> None:
    x, tx = G.arange(3.0).reshape(3, 1).requires_grad_(), torch.arange(3.0).reshape(3, 1).requires_grad_()
    for t in (x, tx):
        (t.expand(3, 4) * t.transpose(0, 1).expand(3, 3).sum(0, keepdim=True).transpose(0, 1)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    base = G.zeros(1, 4)
    e = base.expand(3, 4)
    assert e.storage is base.storage and e.stride() == (0, 1)
    base.add_(1.0)
    assert e.tolist() == [[1.0] * 4] * 3


# -- reductions (Note [Direct reductions]) ------------------------------------------------------------
REDUCTIONS = [lambda t: t.sum(), lambda t: t.sum(1), lambda t: t.sum(-1, keepdim=True), lambda t: t.sum((0, 2)),
              lambda t: t.sum([]), lambda t: t.mean(), lambda t: t.mean(0), lambda t: t.mean((-1, 0), True),
              lambda t: t.amax(), lambda t: t.amax(1), lambda t: t.amin((0, 1)), lambda t: t.amax(-1, True),
              lambda t: t.amin(), lambda t: t.sum(dtype=G.float64 if isinstance(t, G.Tensor) else torch.float64)]


@pytest.mark.parametrize("case", range(len(REDUCTIONS)))
@pytest.mark.parametrize("dt", [G.float32, G.float64, G.float16, G.int32, G.bool], ids=lambda d: d.name)
@pytest.mark.parametrize("layout", ["contiguous", "permuted", "1d", "0d"])
def test_reductions_match_pytorch(case: int, dt: G.dtype, layout: str) -> None:
    fn = REDUCTIONS[case]
    a = (np.arange(24) % 7 - 3).reshape(2, 3, 4)
    if layout == "permuted":
        a = a.transpose(2, 0, 1)
    elif layout == "1d":
        a = a.reshape(-1)
    elif layout == "0d":
        a = a.reshape(-1)[5:6].reshape(())
    x, tx = G.tensor(a).to(dt), torch.tensor(a).to(_torch_dtype(dt))
    try:
        want = fn(tx)
    except (RuntimeError, IndexError) as e:
        with pytest.raises(type(e)):
            fn(x)
        return
    got = fn(x)
    assert got.dtype.name == str(want.dtype).removeprefix("torch.") and got.shape == tuple(want.shape)
    np.testing.assert_allclose(got.numpy().astype(np.float64), want.numpy().astype(np.float64), rtol=1e-3)


def test_reductions_of_empty_tensors_match_pytorch() -> None:
    x, tx = G.zeros(0, 3), torch.zeros(0, 3)
    for fn in (lambda t: t.sum(), lambda t: t.sum(0), lambda t: t.mean(1), lambda t: t.amax(1)):
        np.testing.assert_array_equal(fn(x).numpy(), fn(tx).numpy())
    for fn in (lambda t: t.mean(), lambda t: t.mean(0)):
        assert np.isnan(fn(x).numpy()).all() and np.isnan(fn(tx).numpy()).all()
    for bad in (lambda t: t.amax(), lambda t: t.amax(0), lambda t: t.sum(2), lambda t: t.mean(-3)):
        with pytest.raises(Exception) as want:
            bad(tx)
        with pytest.raises(type(want.value), match=str(want.value).split("(")[0][:20]):
            bad(x)


# -- advanced indexing with one index tensor ----------------------------------------------------------
INDEX_KEYS = [np.array([0, 2]), np.array([-1, 0, 0]), np.array([[1], [3]]), np.array([True, False, True, False]),
              np.array([[True, False, True]] * 4), np.array([1, 0, 1, 1], dtype=np.uint8), np.array([], dtype=np.int64),
              np.array([[[0, 3]]])]


@pytest.mark.parametrize("key", range(len(INDEX_KEYS)))
@pytest.mark.parametrize("value", [None, 0.5, "tensor"])
def test_one_index_tensor_matches_pytorch(key: int, value: Any) -> None:
    k = INDEX_KEYS[key]
    x, tx = G.arange(12.0).reshape(4, 3), torch.arange(12.0).reshape(4, 3)
    gk, tk = G.tensor(k), torch.tensor(k)
    if value is None:
        got, want = x[gk], tx[tk]
        assert got.shape == tuple(want.shape)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        return
    if k.dtype == np.uint8:
        tk = tk.bool()  # PyTorch assigns through a byte mask only as a bool one (its masked_fill_ refuses it)
    v, tv = (G.tensor(7.0), torch.tensor(7.0)) if value == "tensor" else (value, value)
    version = x._version
    x[gk] = v
    tx[tk] = tv
    np.testing.assert_array_equal(x.numpy(), tx.numpy())
    assert x._version > version


@pytest.mark.parametrize("key", [np.array([4]), np.array([-5]), np.array([True, False]), np.array([[[True]]]),
                                 np.array([[True] * 3] * 4 + [[False] * 3]), np.array([0.5])], ids=repr)
def test_bad_index_tensors_raise_as_pytorch(key: Any) -> None:
    x, tx = G.zeros(4, 3), torch.zeros(4, 3)
    for get in (lambda t, k: t[k], lambda t, k: t.__setitem__(k, 1.0)):
        with pytest.raises(Exception) as want:
            get(tx, torch.tensor(key))
        with pytest.raises(type(want.value)):
            get(x, G.tensor(key))


def test_index_tensor_fast_path_records_autograd() -> None:
    x, tx = G.arange(12.0).reshape(4, 3).requires_grad_(), torch.arange(12.0).reshape(4, 3).requires_grad_()
    for t, lib in ((x, G), (tx, torch)):
        idx, mask = lib.tensor([0, 2, 2]), lib.tensor([True, False, True, True])
        (t[idx] * 2).sum().backward()
        (t[mask] ** 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


# -- round 2: direct method calls, the `_base` slot, one-tensor keys ----------------------------------
def test_varargs_methods_that_call_the_dispatch_table_still_dispatch() -> None:
    """Note [Direct method calls]: `x.view(2, 8)` skips the op function, not the dispatcher: a kernel
    registered at run time, an included key's fallback and autograd all still see the call."""
    from generated import _methods
    direct = {n for n in _methods.__dict__ if f"_tab_{n}" in _methods.__dict__}
    assert {"view", "reshape", "permute", "expand"} <= direct
    # expand's keyword-only `implicit` is passed at its default; given, it goes through the op function
    implicit = []
    default_expand = dispatcher.find("expand").kernels["CompositeExplicitAutograd"]

    def expand(self: Any, size: Any, flag: bool = False) -> Any:
        implicit.append(flag)
        return default_expand(self, size, flag)

    undo = dispatcher.register("expand", "CPU", expand)
    try:
        assert G.ones(1, 3).expand(2, 3).shape == (2, 3) and G.ones(1, 3).expand(2, 3, implicit=True).shape == (2, 3)
    finally:
        undo()
    assert implicit == [False, True]
    seen = []
    default = dispatcher.find("view").kernels["CompositeExplicitAutograd"]

    def mine(self: Any, size: Any) -> Any:
        seen.append(tuple(size))
        return default(self, size)

    x = G.arange(16.0)
    undo = dispatcher.register("view", "CPU", mine)
    try:
        assert x.view(2, 8).shape == (2, 8) and x.view((4, 4)).shape == (4, 4)
    finally:
        undo()
    assert seen == [(2, 8), (4, 4)]
    calls = []

    def fallback(op: Any, args: list[Any]) -> Any:
        calls.append(op.name)
        with exclude_keys("Tracer"):
            return op.call(*args)

    undo = dispatcher.register_fallback("Tracer", fallback)
    try:
        with include_keys("Tracer"):
            x.permute(0)
    finally:
        undo()
    assert calls == ["permute"]
    w, tw = G.arange(6.0).requires_grad_(), torch.arange(6.0).requires_grad_()
    for t in (w, tw):
        (t.reshape(2, 3).permute(1, 0).flip(0) * t.view(3, 2)).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), tw.grad.numpy())
    with pytest.raises(TypeError):
        G.Tensor.view([1, 2], 2)  # not a tensor: the op function's error


def test_views_keep_base_in_a_slot() -> None:
    """Note [Lean tensor construction]: every tensor has `_base` (None unless a view), and making a view
    creates no instance dict."""
    x = G.zeros(4, 4)
    assert x._base is None and G.tensor([1.0])._base is None and (x + 1)._base is None
    for v in (x.view(16), x[None], x[..., 1], x.t(), x[:1].expand(3, 4), x.reshape(2, 8).flatten()):
        assert v._base is x
        assert not getattr(v, "__dict__", None)
    assert G.Tensor(2, 3)._base is None  # the legacy constructor copies every slot


@pytest.mark.parametrize("dt", [G.float32, G.float64], ids=lambda d: d.name)
def test_direct_reductions_give_fresh_arrays_of_the_dtype(dt: G.dtype) -> None:
    """Note [Direct reductions]: a 1-d input's single-dim reduce is a NumPy scalar, the others arrays."""
    x = G.arange(4.0, dtype=dt)
    for fn in (lambda t: t.sum(), lambda t: t.sum(0), lambda t: t.mean(0), lambda t: t.mean(),
               lambda t: t.amax(0), lambda t: t.amin(-1), lambda t: t.amax(0, True)):
        r = fn(x)
        assert r._data.__class__ is np.ndarray and r._data.dtype == dt.np and r.dtype is dt
        assert not np.shares_memory(r._data, x._data) and r._base is None
    assert x.mean(0).item() == 1.5 and x.amin(-1).item() == 0.0 and x.amax(0, True).shape == (1,)
