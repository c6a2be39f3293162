"""runtime.strides against NumPy: random (often non-contiguous) arrays, the same view op in both, and a
comparison of shape, strides, offset and the elements the geometry addresses."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from runtime import strides as S

ITEM = 8  # int64 elements
SETTINGS = settings(max_examples=150, deadline=None)


class Strided:
    """A NumPy view over a flat base buffer, with its geometry in elements."""

    def __init__(self, base: np.ndarray, arr: np.ndarray):
        self.base = base
        self.arr = arr
        self.shape = arr.shape
        self.strides = tuple(s // ITEM for s in arr.strides)
        self.offset = (_addr(arr) - _addr(base)) // ITEM

    def __repr__(self) -> str:
        return f"Strided(shape={self.shape}, strides={self.strides}, offset={self.offset})"


def _addr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _materialize(base: np.ndarray, shape, strides, offset: int) -> np.ndarray:
    """The elements a geometry addresses in `base` (no bounds check is needed: inputs come from NumPy)."""
    if S.numel(shape) == 0:
        return np.empty(shape, dtype=base.dtype)
    return np.lib.stride_tricks.as_strided(base[offset:], shape, tuple(s * ITEM for s in strides))


def assert_same_view(base: np.ndarray, geometry, expected: np.ndarray) -> None:
    """`geometry` = (shape, strides[, offset]) must describe the NumPy view `expected` of `base`.

    Shapes match exactly. Strides and offset must agree with NumPy wherever they matter: strides of dims of
    size > 1, and the offset when the view is non-empty (NumPy and PyTorch choose freely elsewhere). The
    addressed elements must be NumPy's elements, which checks everything the geometry means."""
    shape, strides = geometry[0], geometry[1]
    offset = geometry[2] if len(geometry) == 3 else (_addr(expected) - _addr(base)) // ITEM
    assert shape == expected.shape
    assert len(strides) == len(shape)
    if expected.size:
        np_strides = tuple(s // ITEM for s in expected.strides)
        significant = [s for s, n in zip(strides, shape, strict=True) if n > 1]
        assert significant == [s for s, n in zip(np_strides, shape, strict=True) if n > 1]
        assert offset == (_addr(expected) - _addr(base)) // ITEM
        np.testing.assert_array_equal(_materialize(base, shape, strides, offset), expected)


@st.composite
def strided(draw, min_ndim: int = 0, max_ndim: int = 4, max_size: int = 4) -> Strided:
    """A random view: arange(...).reshape(shape), then a random permutation and stepped slices."""
    shape = draw(st.lists(st.integers(0, max_size), min_size=min_ndim, max_size=max_ndim))
    base = np.arange(S.numel(shape), dtype=np.int64)
    arr = base.reshape(shape)
    if arr.ndim and draw(st.booleans()):
        arr = arr.transpose(draw(st.permutations(range(arr.ndim))))
    if arr.ndim and draw(st.booleans()):
        index = tuple(
            slice(draw(st.integers(0, 1)), None, draw(st.integers(1, 2))) if draw(st.booleans()) else slice(None)
            for _ in range(arr.ndim)
        )
        arr = arr[index]
    return Strided(base, arr)


def _dim(ndim: int):
    bound = max(ndim, 1)
    return st.integers(-bound, bound - 1)


def _along(dim: int, ndim: int, item):
    return (slice(None),) * (dim % max(ndim, 1)) + (item, Ellipsis)


# ---------------------------------------------------------------------------------------------------------
# Basics


@pytest.mark.parametrize(
    "shape, expected",
    [((), ()), ((5,), (1,)), ((2, 3, 4), (12, 4, 1)), ((2, 0, 3), (3, 3, 1)), ((0,), (1,)), ((3, 1), (1, 1))],
)
def test_contiguous_strides(shape, expected):
    assert S.contiguous_strides(shape) == expected
    assert S.is_contiguous(shape, expected)


def test_numel():
    assert S.numel(()) == 1
    assert S.numel((2, 3, 4)) == 24
    assert S.numel((2, 0, 4)) == 0


@SETTINGS
@given(strided())
def test_is_contiguous_matches_numpy(t):
    assert S.is_contiguous(t.shape, t.strides) == t.arr.flags["C_CONTIGUOUS"]


@pytest.mark.parametrize(
    "shape, strides, expected",
    [
        ((2, 1, 3), (3, 100, 1), True),  # size-1 dims are ignored
        ((2, 0, 3), (1, 7, 9), True),  # empty tensors are contiguous
        ((2, 3), (1, 2), False),
        ((3,), (2,), False),
        ((), (), True),
    ],
)
def test_is_contiguous_cases(shape, strides, expected):
    assert S.is_contiguous(shape, strides) is expected


@pytest.mark.parametrize("dim, ndim, expected", [(0, 3, 0), (-1, 3, 2), (-3, 3, 0), (2, 3, 2), (0, 0, 0), (-1, 0, 0)])
def test_wrap_dim(dim, ndim, expected):
    assert S.wrap_dim(dim, ndim) == expected


@pytest.mark.parametrize(
    "dim, ndim, message",
    [
        (5, 2, "Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
        (-3, 2, "Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
        (1, 0, "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    ],
)
def test_wrap_dim_errors(dim, ndim, message):
    with pytest.raises(IndexError, match=re.escape(message)):
        S.wrap_dim(dim, ndim)


# ---------------------------------------------------------------------------------------------------------
# Index helpers


@SETTINGS
@given(strided(), st.data())
def test_index_to_position(t, data):
    assume(t.arr.size > 0)
    index = tuple(data.draw(st.integers(0, n - 1)) for n in t.shape)
    assert t.base[S.index_to_position(index, t.strides, t.offset)] == t.arr[index]


@SETTINGS
@given(strided(max_ndim=3), st.data())
def test_broadcast_index(t, data):
    assume(t.arr.size > 0)
    lead = data.draw(st.lists(st.integers(1, 3), max_size=2))
    big_shape = tuple(lead) + tuple(data.draw(st.sampled_from([n, 3])) if n == 1 else n for n in t.shape)
    big = np.broadcast_to(t.arr, big_shape)
    big_index = tuple(data.draw(st.integers(0, n - 1)) for n in big_shape)
    assert t.arr[S.broadcast_index(big_index, big_shape, t.shape)] == big[big_index]


# ---------------------------------------------------------------------------------------------------------
# View ops against NumPy


@SETTINGS
@given(strided(), st.data())
def test_transpose(t, data):
    d0, d1 = data.draw(_dim(t.arr.ndim)), data.draw(_dim(t.arr.ndim))
    expected = np.swapaxes(t.arr, d0, d1) if t.arr.ndim else t.arr
    assert_same_view(t.base, S.transpose(t.shape, t.strides, d0, d1), expected)


@SETTINGS
@given(strided(), st.data())
def test_permute(t, data):
    dims = data.draw(st.permutations(range(t.arr.ndim)))
    dims = [d - t.arr.ndim if data.draw(st.booleans()) else d for d in dims]
    assert_same_view(t.base, S.permute(t.shape, t.strides, dims), np.transpose(t.arr, dims))


@SETTINGS
@given(strided(min_ndim=1), st.data())
def test_select(t, data):
    dim = data.draw(_dim(t.arr.ndim))
    size = t.shape[dim]
    assume(size > 0)
    index = data.draw(st.integers(-size, size - 1))
    got = S.select(t.shape, t.strides, t.offset, dim, index)
    assert_same_view(t.base, got, t.arr[_along(dim, t.arr.ndim, index)])


@SETTINGS
@given(
    strided(min_ndim=1),
    st.data(),
    st.none() | st.integers(-6, 6),
    st.none() | st.integers(-6, 6),
    st.none() | st.integers(1, 3),
)
def test_slice_dim(t, data, start, stop, step):
    dim = data.draw(_dim(t.arr.ndim))
    got = S.slice_dim(t.shape, t.strides, t.offset, dim, start, stop, step)
    assert_same_view(t.base, got, t.arr[_along(dim, t.arr.ndim, slice(start, stop, step))])


@SETTINGS
@given(strided(min_ndim=1), st.data())
def test_narrow(t, data):
    dim = data.draw(_dim(t.arr.ndim))
    size = t.shape[dim]
    start = data.draw(st.integers(-size, size))
    begin = start + size if start < 0 else start
    length = data.draw(st.integers(0, size - begin))
    got = S.narrow(t.shape, t.strides, t.offset, dim, start, length)
    assert_same_view(t.base, got, t.arr[_along(dim, t.arr.ndim, slice(begin, begin + length))])


@SETTINGS
@given(strided(min_ndim=2), st.data(), st.integers(-5, 5))
def test_diagonal(t, data, diag_offset):
    ndim = t.arr.ndim
    d1 = data.draw(_dim(ndim))
    d2 = data.draw(_dim(ndim).filter(lambda d: d % ndim != d1 % ndim))
    got = S.diagonal(t.shape, t.strides, t.offset, diag_offset, d1, d2)
    assert_same_view(t.base, got, np.diagonal(t.arr, diag_offset, d1, d2))


@SETTINGS
@given(strided(max_size=2), st.data())
def test_squeeze(t, data):
    ndim = t.arr.ndim
    assert_same_view(t.base, S.squeeze(t.shape, t.strides), np.squeeze(t.arr))
    dims = data.draw(st.lists(_dim(ndim), unique_by=lambda d: d % max(ndim, 1), max_size=ndim))
    ones = tuple(d for d in dims if ndim and t.shape[d] == 1)  # NumPy refuses the others; PyTorch keeps them
    assert_same_view(t.base, S.squeeze(t.shape, t.strides, tuple(dims)), np.squeeze(t.arr, ones))
    if dims:
        single = dims[0]
        expected = np.squeeze(t.arr, single) if ndim and t.shape[single] == 1 else t.arr
        assert_same_view(t.base, S.squeeze(t.shape, t.strides, single), expected)


@SETTINGS
@given(strided(), st.data())
def test_unsqueeze(t, data):
    ndim = t.arr.ndim
    dim = data.draw(st.integers(-ndim - 1, ndim))
    shape, strides = S.unsqueeze(t.shape, t.strides, dim)
    assert_same_view(t.base, (shape, strides), np.expand_dims(t.arr, dim))
    assert S.is_contiguous(shape, strides) == S.is_contiguous(t.shape, t.strides)


@SETTINGS
@given(strided(max_ndim=3), st.data())
def test_expand(t, data):
    target = [data.draw(st.sampled_from([-1, 1, 3]) if n == 1 else st.sampled_from([-1, n])) for n in t.shape]
    target = data.draw(st.lists(st.integers(1, 3), max_size=2)) + target
    shape, strides = S.expand(t.shape, t.strides, target)
    concrete = tuple(n for n in shape)
    assert_same_view(t.base, (shape, strides), np.broadcast_to(t.arr, concrete))
    for new, old, n in zip(reversed(strides), reversed(t.strides), reversed(t.shape), strict=False):
        if n == 1 and new != old:
            assert new == 0


def _numpy_view(arr: np.ndarray, shape) -> np.ndarray | None:
    """NumPy's reshape when it can be done without a copy, else None."""
    try:
        return arr.reshape(shape, copy=False)
    except ValueError:
        return None


@settings(max_examples=300, deadline=None)
@given(strided(), st.data())
def test_view_strides_matches_numpy_no_copy_reshape(t, data):
    n = t.arr.size
    factors = [d for d in range(1, n + 1) if n % d == 0] or [0]
    new_shape = []
    remaining = n
    for _ in range(data.draw(st.integers(0, 4))):
        f = data.draw(st.sampled_from([d for d in factors if d and remaining % d == 0] or [1]))
        new_shape.append(f)
        remaining //= f if f else 1
        if data.draw(st.booleans()):
            new_shape.append(1)
    new_shape.append(remaining)
    new_shape = tuple(data.draw(st.permutations(new_shape)))
    strides = S.view_strides(t.shape, t.strides, new_shape)
    if n == 0:
        assert strides is not None  # an empty tensor can always be viewed
        return
    expected = _numpy_view(t.arr, new_shape)
    assert (strides is not None) == (expected is not None)
    if expected is not None:
        assert np.shares_memory(expected, t.arr)
        assert_same_view(t.base, (new_shape, strides, t.offset), expected)
    else:
        assert not np.shares_memory(t.arr.reshape(new_shape), t.arr)


@pytest.mark.parametrize(
    "old_shape, old_strides, new_shape, expected",
    [
        ((2, 3), (3, 1), (6,), (1,)),
        ((2, 3), (1, 2), (6,), None),  # transposed: a copy is needed
        ((2, 3), (1, 2), (2, 3, 1), (1, 2, 2)),
        ((4, 3), (6, 1), (2, 2, 3), (12, 6, 1)),  # row-sliced: outer dims still split
        ((4, 3), (6, 1), (12,), None),
        ((), (), (1, 1), (1, 1)),
        ((0, 3), (3, 1), (3, 0), (1, 1)),
        ((0, 3), (5, 7), (0, 3), (5, 7)),
    ],
)
def test_view_strides_cases(old_shape, old_strides, new_shape, expected):
    assert S.view_strides(old_shape, old_strides, new_shape) == expected


@SETTINGS
@given(strided(), st.data())
def test_flatten_and_unflatten_shape(t, data):
    ndim = t.arr.ndim
    start = data.draw(_dim(ndim))
    end = data.draw(_dim(ndim).filter(lambda d: d % max(ndim, 1) >= start % max(ndim, 1)))
    got = S.flatten_shape(t.shape, start, end)
    if ndim == 0:
        assert got == (1,)
        return
    s, e = start % ndim, end % ndim
    assert got == t.shape[:s] + (int(np.prod(t.shape[s : e + 1])),) + t.shape[e + 1 :]
    back = list(t.shape[s : e + 1])
    if back and data.draw(st.booleans()) and got[s]:
        back[data.draw(st.integers(0, len(back) - 1))] = -1
    assert S.unflatten_shape(got, s, back) == t.shape


@SETTINGS
@given(st.lists(st.integers(0, 4), max_size=4), st.data())
def test_infer_size_matches_numpy_reshape(shape, data):
    n = S.numel(shape)
    guess = list(shape)
    if guess and data.draw(st.booleans()):
        guess[data.draw(st.integers(0, len(guess) - 1))] = -1
    try:
        expected = np.empty(n).reshape(guess).shape
    except ValueError:
        with pytest.raises(RuntimeError):
            S.infer_size(guess, n)
    else:
        assert S.infer_size(guess, n) == expected


@SETTINGS
@given(st.lists(st.lists(st.sampled_from([0, 1, 2, 3]), max_size=3), min_size=1, max_size=3))
def test_broadcast_shapes_matches_numpy(shapes):
    try:
        expected = np.broadcast_shapes(*shapes)
    except ValueError:
        with pytest.raises(RuntimeError, match="cannot be broadcast"):
            S.broadcast_shapes(*shapes)
    else:
        assert S.broadcast_shapes(*shapes) == expected


# ---------------------------------------------------------------------------------------------------------
# Error messages


def raises(exc, message):
    return pytest.raises(exc, match="^" + re.escape(message) + "$")


def test_infer_size_errors():
    with raises(RuntimeError, "shape '[2, 5]' is invalid for input of size 9"):
        S.infer_size((2, 5), 9)
    with raises(RuntimeError, "shape '[-1, 4]' is invalid for input of size 9"):
        S.infer_size((-1, 4), 9)
    with raises(RuntimeError, "only one dimension can be inferred"):
        S.infer_size((-1, -1), 4)
    with raises(RuntimeError, "invalid shape dimension -2 in shape [-2, 3]"):
        S.infer_size((-2, 3), 6)
    with raises(
        RuntimeError,
        "cannot reshape tensor of 0 elements into shape [0, -1] because the unspecified dimension size -1 "
        "can be any value and is ambiguous",
    ):
        S.infer_size((0, -1), 0)


def test_view_strides_size_mismatch():
    with raises(RuntimeError, "shape '[4]' is invalid for input of size 6"):
        S.view_strides((2, 3), (3, 1), (4,))


def test_broadcast_shapes_errors():
    with raises(
        RuntimeError,
        "shapes [2, 3] and [2, 4] cannot be broadcast: the size of tensor a (3) must match the size of "
        "tensor b (4) at non-singleton dimension 1",
    ):
        S.broadcast_shapes((2, 3), (2, 4))
    with raises(
        RuntimeError,
        "shapes [2, 3, 1] and [4, 1] cannot be broadcast: the size of tensor a (3) must match the size of "
        "tensor b (4) at non-singleton dimension 1",
    ):
        S.broadcast_shapes((2, 3, 1), (4, 1))
    with raises(
        RuntimeError,
        "shapes [2, 3] and [0] cannot be broadcast: the size of tensor a (3) must match the size of "
        "tensor b (0) at non-singleton dimension 1",
    ):
        S.broadcast_shapes((3,), (2, 1), (0,))
    assert S.broadcast_shapes() == ()


def test_expand_errors():
    with raises(
        RuntimeError,
        "expand: the number of sizes provided (1) must be greater or equal to the number of dimensions in "
        "the tensor (2); tensor sizes [2, 3], target sizes [3]",
    ):
        S.expand((2, 3), (3, 1), (3,))
    with raises(
        RuntimeError,
        "expand: the expanded size of the tensor (4) must match the existing size (3) at non-singleton "
        "dimension 1.  Target sizes: [2, 4].  Tensor sizes: [3]",
    ):
        S.expand((3,), (1,), (2, 4))
    with raises(
        RuntimeError,
        "expand: the expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0; "
        "target sizes [-1, 3]",
    ):
        S.expand((3,), (1,), (-1, 3))
    with raises(RuntimeError, "expand: invalid size -2 at dimension 0; target sizes [-2]"):
        S.expand((1,), (1,), (-2,))


def test_permute_errors():
    with raises(
        RuntimeError,
        "permute: number of dims don't match: the tensor has shape [2, 3] (2 dims) but dims [0] has 1",
    ):
        S.permute((2, 3), (3, 1), (0,))
    with raises(RuntimeError, "permute: repeated dim in dims [0, -2] for a tensor of shape [2, 3]"):
        S.permute((2, 3), (3, 1), (0, -2))
    with raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"):
        S.permute((2, 3), (3, 1), (0, 2))


def test_transpose_errors_and_0d():
    assert S.transpose((), (), 0, -1) == ((), ())
    with raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"):
        S.transpose((2, 3), (3, 1), 0, 2)


def test_select_errors():
    with raises(IndexError, "index 5 is out of bounds for dimension 0 with size 3"):
        S.select((3,), (1,), 0, 0, 5)
    with raises(IndexError, "index -4 is out of bounds for dimension 1 with size 3"):
        S.select((2, 3), (3, 1), 0, -1, -4)
    with raises(IndexError, "select() cannot be applied to a 0-dim tensor."):
        S.select((), (), 0, 0, 0)


def test_slice_errors():
    with raises(ValueError, "step must be greater than zero"):
        S.slice_dim((3,), (1,), 0, 0, None, None, 0)
    with raises(ValueError, "step must be greater than zero"):
        S.slice_dim((3,), (1,), 0, 0, None, None, -1)
    with raises(IndexError, "slice() cannot be applied to a 0-dim tensor."):
        S.slice_dim((), (), 0, 0, 0, 1, 1)
    with raises(IndexError, "Dimension out of range (expected to be in range of [-1, 0], but got 1)"):
        S.slice_dim((3,), (1,), 0, 1, 0, 1, 1)


def test_narrow_errors():
    with raises(RuntimeError, "narrow(): start (2) + length (2) exceeds dimension size (3) of dimension 0"):
        S.narrow((3,), (1,), 0, 0, 2, 2)
    with raises(IndexError, "start out of range (expected to be in range of [-3, 3], but got 4)"):
        S.narrow((3,), (1,), 0, 0, 4, 0)
    with raises(RuntimeError, "narrow(): length must be non-negative, got -1"):
        S.narrow((3,), (1,), 0, 0, 0, -1)
    with raises(RuntimeError, "narrow() cannot be applied to a 0-dim tensor."):
        S.narrow((), (), 0, 0, 0, 1)


def test_diagonal_errors():
    with raises(RuntimeError, "diagonal dimensions cannot be identical 0, -2"):
        S.diagonal((2, 3), (3, 1), 0, 0, 0, -2)
    with raises(IndexError, "Dimension out of range (expected to be in range of [-1, 0], but got 1)"):
        S.diagonal((3,), (1,), 0, 0, 0, 1)
    # an empty diagonal keeps the storage offset
    assert S.diagonal((2, 3), (3, 1), 7, 5, 0, 1) == ((0,), (4,), 7)


def test_squeeze_errors_and_0d():
    with raises(RuntimeError, "dim 1 appears multiple times in the list of dims [1, -1]"):
        S.squeeze((1, 1), (1, 1), (1, -1))
    with raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"):
        S.squeeze((1, 1), (1, 1), 2)
    assert S.squeeze((), (), 0) == ((), ())
    assert S.squeeze((), (), (-1,)) == ((), ())
    assert S.squeeze((2, 1, 3), (3, 3, 1), (0, 1)) == ((2, 3), (3, 1))


def test_unsqueeze_errors():
    with raises(IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 3)"):
        S.unsqueeze((2, 3), (3, 1), 3)
    assert S.unsqueeze((), (), -1) == ((1,), (1,))


def test_flatten_unflatten_errors():
    with raises(RuntimeError, "flatten() has invalid args: start_dim (2) cannot come after end_dim (1)"):
        S.flatten_shape((2, 3, 4), 2, 1)
    with raises(
        RuntimeError,
        "unflatten: provided sizes [2, 2] don't multiply up to the size of dim 0 (5) in the input tensor "
        "of shape [5, 3]",
    ):
        S.unflatten_shape((5, 3), 0, (2, 2))
    with raises(RuntimeError, "unflatten: sizes must be non-empty"):
        S.unflatten_shape((5, 3), 0, ())
    with raises(RuntimeError, "only one dimension can be inferred"):
        S.unflatten_shape((4,), 0, (-1, -1))
    with raises(RuntimeError, "unflatten: cannot be applied to a 0-dim tensor"):
        S.unflatten_shape((), 0, (1,))
    assert S.unflatten_shape((6, 5), -2, (2, -1)) == (2, 3, 5)


# -- is_non_overlapping_and_dense against the offsets a layout reaches -------------------------------------
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(-3, 12)), min_size=0, max_size=4), st.sampled_from([1, 4, 8]))
def test_dense_means_the_offsets_fill_a_range_once(dims: list[tuple[int, int]], unit: int) -> None:
    shape = tuple(n for n, _ in dims)
    strides = tuple(s * unit for _, s in dims)
    offsets = [0]
    for n, step in zip(shape, strides, strict=True):
        offsets = [o + i * step for o in offsets for i in range(n)]
    lo = min(offsets)
    fills = sorted(offsets) == list(range(lo, lo + len(offsets) * unit, unit))
    # a negative stride over a dim of size > 1 reaches a range too, but PyTorch's definition (sorted strides
    # from the smallest up, each the span of those below) calls it not dense
    assert S.is_non_overlapping_and_dense(shape, strides, unit) == (fills and all(
        s >= 0 or n == 1 for n, s in zip(shape, strides, strict=True)))


def test_dense_copy_keeps_a_dense_array_layout() -> None:
    from runtime.kernels import dense_copy

    a = np.zeros((3, 4), np.float32).T
    assert dense_copy.is_dense(a) and S.is_non_overlapping_and_dense(a.shape, a.strides, a.itemsize)
    assert not dense_copy.is_dense(np.zeros((3, 4))[:, ::2])
    assert dense_copy.preserved_copy(a).strides == a.strides
