"""Views share storage and have NumPy's geometry: property tests over random shapes and index expressions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import generated as G

SETTINGS = settings(max_examples=60, deadline=None)


def _norm(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int | None, ...]:
    # the stride of a size-1 dim is arbitrary (NumPy and PyTorch choose differently)
    return tuple(s if n > 1 else None for n, s in zip(shape, strides, strict=True))


def geometry(t: G.Tensor) -> tuple[tuple[int, ...], tuple[int | None, ...], int]:
    return tuple(t.shape), _norm(tuple(t.shape), tuple(t.stride())), t.storage_offset()


def np_geometry(base: np.ndarray, a: np.ndarray) -> tuple[tuple[int, ...], tuple[int | None, ...], int]:
    item = a.itemsize
    offset = (a.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // item
    return tuple(a.shape), _norm(tuple(a.shape), tuple(s // item for s in a.strides)), offset


def shares(view: G.Tensor, base: G.Tensor) -> bool:
    return view.storage is base.storage and np.shares_memory(view.numpy(), base.numpy()) or view.numel() == 0


shapes = st.lists(st.integers(1, 5), min_size=1, max_size=4).map(tuple)


def _item(draw: st.DrawFn, n: int) -> list[object]:
    kind = draw(st.sampled_from(["int", "slice", "none", "full"]))
    if kind == "int":
        return [draw(st.integers(-n, n - 1))]
    if kind == "slice":
        start = draw(st.none() | st.integers(-n - 2, n + 2))
        stop = draw(st.none() | st.integers(-n - 2, n + 2))
        step = draw(st.none() | st.integers(1, 3))
        return [slice(start, stop, step)]
    if kind == "none":
        return [None, slice(None)]
    return [slice(None)]


@st.composite
def index_expr(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[object, ...]:
    """A basic index: ints (negative too), slices with steps, None and at most one Ellipsis."""
    ndim = len(shape)
    head = draw(st.integers(0, ndim))
    items: list[object] = []
    for d in range(head):
        items += _item(draw, shape[d])
    if draw(st.booleans()):
        tail = draw(st.integers(0, ndim - head))
        items.append(Ellipsis)
        for d in range(ndim - tail, ndim):
            items += _item(draw, shape[d])
    if draw(st.booleans()):
        items.append(None)
    return tuple(items)


@SETTINGS
@given(st.data())
def test_getitem_basic_matches_numpy_geometry(data: st.DataObject) -> None:
    shape = data.draw(shapes)
    key = data.draw(index_expr(shape))
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    t = G.tensor(a)
    view = t[key]
    # a trailing Ellipsis makes NumPy return a view even where it would return a scalar
    expected = t.numpy()[key if Ellipsis in key else (*key, Ellipsis)]
    assert geometry(view) == np_geometry(t.numpy(), expected)
    assert view.storage is t.storage
    np.testing.assert_array_equal(view.numpy(), expected)


@SETTINGS
@given(shapes, st.data())
def test_permute_transpose_t_mT(shape: tuple[int, ...], data: st.DataObject) -> None:
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    t = G.from_numpy(a)
    perm = data.draw(st.permutations(range(len(shape))))
    assert geometry(t.permute(*perm)) == np_geometry(a, a.transpose(perm))
    d0, d1 = data.draw(st.integers(-len(shape), len(shape) - 1)), data.draw(st.integers(-len(shape), len(shape) - 1))
    assert geometry(t.transpose(d0, d1)) == np_geometry(a, np.swapaxes(a, d0, d1))
    if len(shape) >= 2:
        assert geometry(t.mT) == np_geometry(a, np.swapaxes(a, -2, -1))
    if len(shape) <= 2:
        assert geometry(t.t()) == np_geometry(a, a.T)
    assert t.permute(*perm).storage is t.storage


@SETTINGS
@given(shapes, st.data())
def test_expand_squeeze_unsqueeze(shape: tuple[int, ...], data: st.DataObject) -> None:
    ones = tuple(1 if data.draw(st.booleans()) else s for s in shape)
    a = np.arange(int(np.prod(ones)), dtype=np.float64).reshape(ones)
    t = G.from_numpy(a)
    lead = data.draw(st.lists(st.integers(1, 3), max_size=2))
    target = (*lead, *shape)
    e = t.expand(*target)
    ref = np.broadcast_to(a, target)
    assert e.shape == ref.shape and geometry(e)[1] == np_geometry(ref, ref)[1]
    np.testing.assert_array_equal(e.numpy(), ref)
    assert e.expand_as(G.empty(target)).shape == target
    assert geometry(t.squeeze()) == np_geometry(a, a.squeeze())
    dim = data.draw(st.integers(-len(ones) - 1, len(ones)))
    u = t.unsqueeze(dim)
    assert u.shape == np.expand_dims(a, dim).shape and u.storage is t.storage


@SETTINGS
@given(shapes, st.data())
def test_view_reshape_flatten_unflatten(shape: tuple[int, ...], data: st.DataObject) -> None:
    n = int(np.prod(shape))
    a = np.arange(n, dtype=np.float32).reshape(shape)
    t = G.from_numpy(a)
    v = t.view(-1)
    assert v.shape == (n,) and v.storage is t.storage
    assert t.flatten().storage is t.storage and t.flatten().shape == (n,)
    start = data.draw(st.integers(0, len(shape) - 1))
    f = t.flatten(start)
    assert f.shape == a.reshape(*shape[:start], -1).shape
    assert f.unflatten(start, shape[start:]).shape == shape
    tt = t.permute(*reversed(range(len(shape))))
    r = tt.reshape(-1)
    np.testing.assert_array_equal(r.numpy(), a.transpose().reshape(-1))
    # a reshape copies only when no view exists
    copies = np.shares_memory(a.transpose().reshape(-1), a) is False
    assert (r.storage is not t.storage) == copies


@SETTINGS
@given(shapes, st.data())
def test_select_narrow_split_chunk_unbind(shape: tuple[int, ...], data: st.DataObject) -> None:
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    t = G.from_numpy(a)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[dim]
    i = data.draw(st.integers(-n, n - 1))
    assert geometry(t.select(dim, i)) == np_geometry(a, a[(slice(None),) * (dim % len(shape)) + (i, Ellipsis)])
    start = data.draw(st.integers(0, n))
    length = data.draw(st.integers(0, n - start))
    nar = t.narrow(dim, start, length)
    assert nar.storage is t.storage
    np.testing.assert_array_equal(nar.numpy(), np.take(a, range(start, start + length), axis=dim))
    size = data.draw(st.integers(1, n))
    pieces = t.split(size, dim)
    for p, ref in zip(pieces, np.array_split(a, range(size, n, size), axis=dim), strict=True):
        assert p.storage is t.storage
        np.testing.assert_array_equal(p.numpy(), ref)
    chunks = data.draw(st.integers(1, 4))
    assert sum(c.shape[dim] for c in t.chunk(chunks, dim)) == n
    parts = t.unbind(dim)
    assert len(parts) == n and all(p.storage is t.storage for p in parts)


@SETTINGS
@given(st.integers(1, 5), st.integers(1, 5), st.integers(-4, 4))
def test_diagonal(n: int, m: int, offset: int) -> None:
    a = np.arange(n * m, dtype=np.float32).reshape(n, m)
    t = G.from_numpy(a)
    d = t.diagonal(offset)
    np.testing.assert_array_equal(d.numpy(), np.diagonal(a, offset))
    assert d.storage is t.storage
    d2 = G.from_numpy(a.reshape(1, n, m)).diagonal(0, -1, -2)
    np.testing.assert_array_equal(d2.numpy(), np.diagonal(a.reshape(1, n, m), 0, -1, -2))


def test_as_strided_shares_and_checks_bounds() -> None:
    t = G.arange(12.0)
    v = t.as_strided((3, 2), (4, 1), 1)
    np.testing.assert_array_equal(v.numpy(), [[1, 2], [5, 6], [9, 10]])
    assert v.storage is t.storage and v.storage_offset() == 1
    w = t[2:].as_strided((2,), (1,), 0)  # the offset counts from the storage's start
    np.testing.assert_array_equal(w.numpy(), [0, 1])
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        t.as_strided((4, 4), (4, 1))


def test_views_write_through_and_bump_version() -> None:
    t = G.zeros(3, 4)
    v = t[1]
    before = t._version
    v.fill_(5.0)
    assert t[1, 2].item() == 5.0 and t._version > before
    t.t()[0].fill_(1.0)
    np.testing.assert_array_equal(t.numpy()[:, 0], [1, 1, 1])


def test_contiguous_clone() -> None:
    t = G.arange(6.0).view(2, 3)
    assert t.is_contiguous() and t.contiguous() is t
    tt = t.t()
    assert not tt.is_contiguous()
    c = tt.contiguous()
    assert c.is_contiguous() and c.storage is not t.storage
    np.testing.assert_array_equal(c.numpy(), t.numpy().T)
    k = t.clone()
    assert k.storage is not t.storage


def test_autograd_through_views() -> None:
    x = G.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    y = x[1:, ::2].sum() + x.select(1, 3).sum() * 2 + x.diagonal().sum() + x.t()[0].sum()
    y.backward()
    expected = np.zeros((3, 4))
    expected[1:, ::2] += 1
    expected[:, 3] += 2
    expected[np.arange(3), np.arange(3)] += 1
    expected[:, 0] += 1
    np.testing.assert_allclose(x.grad.numpy(), expected)
    x.grad = None
    sum(p.sum() * (i + 1) for i, p in enumerate(x.unbind(0))).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.repeat([[1.0], [2.0], [3.0]], 4, axis=1))
    x.grad = None
    x.as_strided((2, 2), (4, 1), 1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[:2, 1:3], 1.0)
    assert x.grad.numpy().sum() == 4


@pytest.mark.parametrize(("fn", "message"), [
    (lambda t: t.view(5), r"shape '\[5\]' is invalid for input of size 6"),
    (lambda t: t.t().view(6), "view size is not compatible"),
    (lambda t: t.view(-1, -1), "only one dimension can be inferred"),
    (lambda t: t.expand(3, 2), "must match the existing size"),
    (lambda t: t.select(0, 2), "index 2 is out of bounds for dimension 0 with size 2"),
    (lambda t: t.transpose(0, 2), r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
    (lambda t: t.permute(0, 0), "repeated dim"),
    (lambda t: t.narrow(1, 2, 2), r"start \(2\) \+ length \(2\) exceeds dimension size \(3\)"),
    (lambda t: t[0, 0, 0], "too many indices for tensor of dimension 2"),
    (lambda t: t[5], "index 5 is out of bounds for dimension 0 with size 2"),
    (lambda t: t[::-1], "step must be greater than zero"),
    (lambda t: t.unflatten(1, (2, 2)), "don't multiply up to the size of dim 1"),
])
def test_view_errors(fn: object, message: str) -> None:
    t = G.arange(6.0).view(2, 3)
    with pytest.raises((RuntimeError, IndexError, ValueError), match=message):
        fn(t)  # type: ignore[operator]


def test_int_list_methods_take_varargs_as_pytorch_does() -> None:
    """Methods whose one argument is an int list are generated with PyTorch's varargs form."""
    a = np.arange(6.0).reshape(2, 3)
    t = G.tensor(a)
    assert t.view(3, 2).shape == t.view((3, 2)).shape == t.view(size=[3, 2]).shape == (3, 2)
    assert t.reshape(6).shape == (6,) and t.reshape(-1, 2).shape == (3, 2)
    np.testing.assert_array_equal(t.permute(1, 0).numpy(), a.T)
    np.testing.assert_array_equal(t.flip(0, 1).numpy(), a[::-1, ::-1])
    np.testing.assert_array_equal(t.repeat(2, 1).numpy(), np.tile(a, (2, 1)))
    np.testing.assert_array_equal(t.tile(2).numpy(), np.tile(a, 2))
    assert t[0].expand(4, 3).shape == (4, 3) and t[0].expand(4, -1, implicit=False).shape == (4, 3)
    z = t.new_zeros(2, 2)
    assert z.shape == (2, 2) and z.dtype == t.dtype
    with pytest.raises(TypeError):
        t.view(2, (3,))  # one list, or ints: not both
