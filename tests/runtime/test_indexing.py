"""__getitem__ / __setitem__ with advanced indices against NumPy, autograd through indexing, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import generated as G


def _np(shape: tuple[int, ...]) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


KEYS = [
    (1, [0, 2]),
    ([0, 2],),
    (slice(None), [1, 0, 1]),
    ([[0, 1], [2, 0]], slice(1, None)),
    ([0, 1], slice(None), [2, 3]),        # separated advanced indices: their dims go first
    (Ellipsis, [3, 0]),
    (None, [1], 2),
    ([True, False, True],),
    (slice(None), np.array([True, False, True, False])),
    ([-1, -3], [-1, 0]),
]


@pytest.mark.parametrize("key", KEYS, ids=[str(i) for i in range(len(KEYS))])
def test_advanced_getitem_matches_numpy(key: tuple[object, ...]) -> None:
    a = _np((3, 4, 5)) if len(key) != 2 or key[1] is not None else _np((3, 4, 5))
    t = G.from_numpy(a)
    tkey = tuple(G.tensor(k) if isinstance(k, list) and k and isinstance(k[0], bool) else k for k in key)
    got = t[tkey]
    ref = a[tuple(np.array(k) if isinstance(k, list) else k for k in key)]
    assert got.shape == ref.shape
    np.testing.assert_array_equal(got.numpy(), ref)


def test_tensor_indices_and_mask() -> None:
    a = _np((4, 3))
    t = G.from_numpy(a)
    np.testing.assert_array_equal(t[t > 5].numpy(), a[a > 5])
    np.testing.assert_array_equal(t[G.tensor([3, 0])].numpy(), a[[3, 0]])
    np.testing.assert_array_equal(t[G.tensor([[1], [2]]), G.tensor([0, 2])].numpy(), a[[[1], [2]], [0, 2]])
    assert t[G.tensor(True)].shape == (1, 4, 3) and t[False].shape == (0, 4, 3)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_random_integer_array_index(shape: list[int], data: st.DataObject) -> None:
    a = _np(tuple(shape))
    t = G.from_numpy(a)
    dim = data.draw(st.integers(0, len(shape) - 1))
    idx = data.draw(st.lists(st.integers(-shape[dim], shape[dim] - 1), min_size=0, max_size=5))
    key = (slice(None),) * dim + (idx,)
    np.testing.assert_array_equal(t[key].numpy(), a[(slice(None),) * dim + (np.array(idx, dtype=np.int64),)])


def test_setitem_basic_and_advanced() -> None:
    t = G.zeros(3, 4)
    ref = np.zeros((3, 4), dtype=np.float32)
    for key, value in [((0,), 1.0), ((slice(None), 1), G.tensor([7.0, 8.0, 9.0])), ((Ellipsis, -1), 3),
                       ((1, slice(None, None, 2)), G.tensor([4, 5])), (([0, 2], [1, 3]), 6.5),
                       ((slice(None), [0]), G.tensor([[1.5], [2.5], [3.5]]))]:
        t[key] = value
        ref[key if not isinstance(key[0], list) else tuple(np.array(k) for k in key)] = \
            value.numpy() if isinstance(value, G.Tensor) else value
    np.testing.assert_array_equal(t.numpy(), ref)
    t[t > 5] = 0.0
    ref[ref > 5] = 0.0
    np.testing.assert_array_equal(t.numpy(), ref)


def test_setitem_bumps_version_and_converts_dtype() -> None:
    t = G.zeros(4, dtype=G.int64)
    v = t._version
    t[1:3] = G.tensor([1.7, 2.2])
    assert t.tolist() == [0, 1, 2, 0] and t._version > v


def test_autograd_through_advanced_index() -> None:
    x = G.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = x[[0, 0, 1], [1, 1, 2]]
    (y * G.tensor([1.0, 2.0, 3.0], dtype=G.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 3, 0], [0, 0, 3]])
    x.grad = None
    x[x > 2].sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0, 0], [1, 1, 1]])


@pytest.mark.parametrize(("key", "message"), [
    ((3,), "index 3 is out of bounds for dimension 0 with size 3"),
    ((0, -5), "index -5 is out of bounds for dimension 0 with size 4"),
    (([0, 7],), "index 7 is out of bounds for dimension 0 with size 3"),
    ((0, 0, 0), "too many indices for tensor of dimension 2"),
    ((Ellipsis, Ellipsis), "single ellipsis"),
    ((1.5,), "only integers, slices"),
    ((G.tensor([True, False]),), "shape of the mask"),
    ((G.tensor([0.0]),), "tensors used as indices must be long, int, byte or bool tensors"),
])
def test_index_errors(key: tuple[object, ...], message: str) -> None:
    t = G.zeros(3, 4)
    with pytest.raises(IndexError, match=message):
        t[key]


def test_index_put_dtype_mismatch_is_an_error() -> None:
    t = G.zeros(3)
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
        t.index_put_([G.tensor([0])], G.tensor([1]))
    t.index_put_([G.tensor([0, 0])], G.tensor([1.0, 2.0]), True)
    assert t.tolist() == [3.0, 0.0, 0.0]


def test_zero_dim_indexing() -> None:
    s = G.tensor(3.0)
    assert s[...].shape == () and s[None].shape == (1,)
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        s[0]
