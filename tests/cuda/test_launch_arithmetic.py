"""The pure launch arithmetic of CUDA kernels, checked on CPU against NumPy (no GPU needed)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from runtime.cuda import launch as L
from runtime.cuda.pointwise import PointwiseKernel, broadcast_strides, plan, select_instance


@pytest.mark.parametrize("bits", [32, 64])
def test_fast_division_matches_floor_division(bits: int) -> None:
    rng = random.Random(bits)
    top = 2 ** (bits - 1) - 1
    divisors = [1, 2, 3, 5, 7, 641, 2**16 + 1, top, *(rng.randint(1, top) for _ in range(300))]
    for d in divisors:
        magic, shift = L.int_divider(d, bits)
        assert 0 < magic < 2**bits
        for n in (0, 1, d - 1, d, d + 1, top, *(rng.randint(0, top) for _ in range(50))):
            assert L.fast_div(n, magic, shift, bits) == n // d, (n, d)


def test_divider_rejects_out_of_range() -> None:
    with pytest.raises(ValueError):
        L.int_divider(0, 32)
    with pytest.raises(ValueError):
        L.int_divider(2**31, 32)


def test_coalesce_merges_dense_dims_and_drops_ones() -> None:
    assert L.coalesce((2, 3, 4), [(12, 4, 1)]) == ((24,), [(1,)])
    assert L.coalesce((2, 1, 4), [(4, 4, 1), (0, 9, 1)]) == ((2, 4), [(4, 1), (0, 1)])
    # a transposed operand keeps both dims
    assert L.coalesce((3, 4), [(4, 1), (1, 3)]) == ((3, 4), [(4, 1), (1, 3)])


def _random_view(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """A non-contiguous view of `shape`: a permuted, stepped slice of a bigger array."""
    perm = rng.permutation(len(shape))
    steps = rng.integers(1, 3, size=len(shape))
    big_shape = [shape[p] * steps[i] for i, p in enumerate(perm)]
    base = np.arange(int(np.prod(big_shape)) or 1)[: int(np.prod(big_shape))].reshape(big_shape)
    view = base[tuple(slice(None, None, s) for s in steps)]
    return view.transpose(np.argsort(perm))


def _start(view: np.ndarray) -> int:
    """Element offset of a view's first element in its base."""
    return (view.__array_interface__["data"][0] - view.base.__array_interface__["data"][0]) // view.itemsize


@pytest.mark.parametrize("seed", range(20))
def test_offsets_visit_the_same_elements_as_numpy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 5, size=rng.integers(1, 5)))
    a = _random_view(rng, shape)
    b_shape = tuple(1 if rng.random() < 0.4 else n for n in shape)[int(rng.integers(0, len(shape))):]
    b = _random_view(rng, b_shape)
    out = np.empty(shape, dtype=a.dtype)
    operands = [out, a, b]
    strides = [broadcast_strides(shape, x.shape, [s // x.itemsize for s in x.strides]) for x in operands]
    path, bits, mshape, mstrides = plan(shape, strides, [0, 0, 0], [8, 8, 8], 2)
    packed = L.pack_strided(mshape, mstrides, bits)
    flat_a, flat_b = a.base.reshape(-1), b.base.reshape(-1)
    a0, b0 = _start(a), _start(b)
    expected = np.broadcast_to(b, shape)
    for linear, (ia, ib) in enumerate(zip(a.reshape(-1), expected.reshape(-1), strict=True)):
        off = L.offsets(linear, packed)
        assert off[0] == linear  # the output is dense, visited in order
        assert flat_a[a0 + off[1]] == ia
        assert flat_b[b0 + off[2]] == ib


def test_struct_layout_matches_the_header() -> None:
    dtype = L.strided_dtype(32, 3)
    assert dtype.itemsize == 4 * (1 + 3 * L.MAX_DIMS + 3 * L.MAX_DIMS)
    assert L.strided_dtype(64, 2).itemsize == 8 * (1 + 3 * L.MAX_DIMS + 2 * L.MAX_DIMS)


def test_index_width() -> None:
    assert L.index_bits(2**31 - 1, (2**31 - 1,), [(1,)]) == 32
    assert L.index_bits(2**31, (2**31,), [(1,)]) == 64
    assert L.index_bits(10, (10,), [(2**28,)]) == 64  # a small tensor with a huge offset


def test_path_choice() -> None:
    assert L.choose_path(True, [True, True], [256, 512], [4, 4], 4) == "vec"
    assert L.choose_path(True, [True, True], [256, 516], [4, 4], 4) == "contig"
    assert L.choose_path(True, [True, False], [256, 512], [4, 4], 4) == "strided"
    assert L.choose_path(False, [True, True], [256, 512], [4, 4], 4) == "strided"


def test_launch_config_is_bounded_by_the_device() -> None:
    assert L.launch_config(1, 132) == L.LaunchConfig(1, L.THREADS)
    assert L.launch_config(2**28, 132).grid == 132 * L.BLOCKS_PER_SM
    assert L.launch_config(1000, 132).grid == 4


def test_instance_selection() -> None:
    k = PointwiseKernel("exp", "exp.cu", "float", 1, 0, {"int32": ("float32", 4), "float64": ("float64", 2)})
    assert select_instance(k, "int32", "float32") == "int32"
    assert select_instance(k, "int32", "float64") == "float64"
    with pytest.raises(NotImplementedError, match="not implemented for 'bool'"):
        select_instance(k, "bool", "float32")
