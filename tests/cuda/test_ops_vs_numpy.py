"""Reductions, softmax, copy/cast, fill, arange and random numbers on a GPU against NumPy, over layouts
(contiguous, transposed, stepped, broadcast, empty, 0-d) and dtypes. Skipped without a device."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from runtime.cuda import is_available, require_cupy

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not is_available(), reason="needs a CUDA device")]

# name -> (base array, view): the view is applied on the host and on the device alike, so the device
# tensor has the same strides as the NumPy reference.
LAYOUTS: dict[str, tuple[Callable[[np.random.Generator], np.ndarray], Callable[[Any], Any]]] = {
    "contiguous": (lambda rng: rng.standard_normal((6, 7, 5)), lambda a: a),
    "transposed": (lambda rng: rng.standard_normal((5, 7, 6)), lambda a: a.transpose(2, 1, 0)),
    "stepped": (lambda rng: rng.standard_normal((12, 7, 10)), lambda a: a[::2, :, 1::2]),
    "zero_dim": (lambda rng: np.array(rng.standard_normal()), lambda a: a),
    "empty": (lambda rng: np.zeros((3, 0, 4)), lambda a: a),
    # The smallest inputs that take each launch path of runtime/cuda/reduce.py: one row of TWO_PASS_MIN
    # elements (two passes), and more rows than the rows kernel's grid on the emulated device's 4 SMs
    # (4 * BLOCKS_PER_SM * 4 = 128 blocks), so blocks loop over rows. A (1, 2**17) row reduced along dim 0
    # was 131072 one-element rows: seconds per case under emulation for no path the others miss.
    "long_row": (lambda rng: rng.standard_normal(1 << 16), lambda a: a),
    "many_rows": (lambda rng: rng.standard_normal((300, 3)), lambda a: a),
}
DIMS = [None, 0, 1, -1, (0, 1), (0, 2), (1, 2), (0, 1, 2)]  # every combination of 3 dims


def _cuda(a: np.ndarray, dtype: str, view: Callable[[Any], Any] = lambda x: x) -> Any:
    """`view(a)` on the device as a tensor of `dtype` (`a` is the base array, already of `dtype`)."""
    cupy = require_cupy()  # CuPy, or the emulated device's module

    from runtime import dtypes
    from runtime.tensor import Tensor

    return Tensor._wrap(view(cupy.asarray(np.ascontiguousarray(a))), dtypes.as_dtype(dtype))


def _sample(layout: str, seed: int, dtype: str, scale: float = 1.0) -> tuple[np.ndarray, Any]:
    """(host view, device tensor) of a layout, values cast to `dtype`."""
    make, view = LAYOUTS[layout]
    base = make(np.random.default_rng(seed)) * scale
    base = base > 0 if dtype == "bool" else base.astype(dtype)
    return view(base), _cuda(base, dtype, view)


def _host(t: Any) -> np.ndarray:
    return t._data.get()


def _valid_dims(a: np.ndarray, dims: Any) -> Any:
    if dims is None or a.ndim == 0:
        return None
    dims = (dims,) if isinstance(dims, int) else dims
    return tuple(d for d in dims if -a.ndim <= d < a.ndim) or None


REDUCTIONS: dict[str, Callable[..., Any]] = {
    "sum": lambda a, axis, kd: a.sum(axis=axis, keepdims=kd),
    "prod": lambda a, axis, kd: a.prod(axis=axis, keepdims=kd),
    "mean": lambda a, axis, kd: a.mean(axis=axis, keepdims=kd),
    "amax": lambda a, axis, kd: a.max(axis=axis, keepdims=kd),
    "amin": lambda a, axis, kd: a.min(axis=axis, keepdims=kd),
    "any": lambda a, axis, kd: a.any(axis=axis, keepdims=kd),
    "all": lambda a, axis, kd: a.all(axis=axis, keepdims=kd),
    "var": lambda a, axis, kd: a.var(axis=axis, keepdims=kd, ddof=1),
    "std": lambda a, axis, kd: a.std(axis=axis, keepdims=kd, ddof=1),
}


def test_layouts_take_every_reduction_path() -> None:
    from runtime.cuda import launch as L
    from runtime.cuda import reduce as R
    from runtime.cuda.emulator.xp import SM_COUNT

    rng = np.random.default_rng(0)
    assert R.use_two_pass(1, LAYOUTS["long_row"][0](rng).size)
    rows = LAYOUTS["many_rows"][0](rng).shape[0]
    assert rows > SM_COUNT * L.BLOCKS_PER_SM * 4  # the rows kernel's grid on the emulated device


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("op", sorted(REDUCTIONS))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "float16"])
def test_reductions_match_numpy(layout: str, op: str, dtype: str) -> None:
    from runtime.cuda import reduce as R

    make, view = LAYOUTS[layout]
    if dtype == "int32" and op in ("mean", "var", "std"):  # floating only, as PyTorch: an error, not a skip
        base = make(np.random.default_rng(0)).astype(dtype)
        with pytest.raises(RuntimeError, match="floating point"):
            R.reduce(op, _cuda(base, dtype, view), None, False, None, 1.0)
        return
    base = make(np.random.default_rng(0)) * (3 if dtype == "int32" else 1)
    if op == "prod":
        base = np.sign(base) + (base == 0)  # +-1: no overflow
    base = base.astype(dtype)
    a = view(base)
    for dims in DIMS:
        axis = _valid_dims(a, dims)
        for keepdim in (False, True):
            empty = a.size == 0 or (axis is not None and any(a.shape[d] == 0 for d in axis))
            if op in ("amax", "amin") and empty:
                continue
            t = _cuda(base, dtype, view)
            correction = 1.0 if op in ("var", "std") else 0.0
            got = R.reduce(op, t, list(axis) if axis else None, keepdim, None, correction)
            with np.errstate(all="ignore"):
                ref = REDUCTIONS[op](a.astype(np.float64) if dtype == "float16" else a, axis, keepdim)
            tol = 2e-2 if dtype == "float16" else 1e-4
            np.testing.assert_allclose(_host(got).astype(np.float64), np.asarray(ref, np.float64), rtol=tol,
                                       atol=tol, err_msg=f"{op} {layout} {dtype} dims={dims} keepdim={keepdim}")
            if op == "sum" and dtype == "int32":
                assert got.dtype.name == "int64"


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped", "zero_dim", "long_row", "many_rows"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "float16"])
def test_max_min_with_indices(layout: str, dtype: str) -> None:
    from runtime.cuda import ops

    a, t = _sample(layout, 1, dtype, 4.0 if dtype == "int64" else 1.0)
    for dim in ([0, -1] if a.ndim else [0]):
        for keepdim in (False, True):
            values, indices = ops.max_dim(t, dim, keepdim)
            np.testing.assert_array_equal(_host(values), a.max(axis=dim if a.ndim else None, keepdims=keepdim))
            np.testing.assert_array_equal(_host(indices), np.argmax(a, axis=dim if a.ndim else None,
                                                                    keepdims=keepdim))
            np.testing.assert_array_equal(_host(ops.argmin(t, dim, keepdim)),
                                          np.argmin(a, axis=dim if a.ndim else None, keepdims=keepdim))
    assert int(_host(ops.argmax(t))) == int(np.argmax(a))


def test_nan_and_ties_follow_pytorch() -> None:
    from runtime.cuda import ops

    a = np.array([[1.0, 3.0, 3.0, np.nan, np.nan], [2.0, 2.0, 0.0, 1.0, 2.0]], np.float32)
    values, indices = ops.max_dim(_cuda(a, "float32"), 1, False)
    assert np.isnan(_host(values)[0]) and _host(indices).tolist() == [3, 0]
    assert _host(ops.argmin(_cuda(a, "float32"), 1, False)).tolist() == [3, 2]


@pytest.mark.parametrize("cols", [5, 33, 257, 1 << 16])  # one warp, a warp and one, a block and one, two passes
def test_nan_propagates_and_ties_take_the_first_index(cols: int) -> None:
    from runtime import dtypes
    from runtime.cuda import reduce as R

    a = np.zeros((1, cols), np.float32)
    a[0, [1, cols - 1]] = 7.0  # a tie: the first index wins
    for dims in (None, [1]):
        values, indices = R.reduce_with_indices("max", _cuda(a, "float32"), None if dims is None else 1)
        assert float(_host(values).item()) == 7.0 and int(_host(indices).item()) == 1, f"{cols} {dims}"
    a[0, cols // 2] = np.nan  # NaN wins over any number, and its (first) index is the argmax/argmin
    for op in ("amax", "amin", "sum", "mean"):
        got = _host(R.reduce(op, _cuda(a, "float32"), None, False, None, 0.0))
        assert np.isnan(got), f"{op} of a row of {cols} with a NaN"
    t = _cuda(a, "float32")
    _, indices = R.reduce_with_indices("min", t, 1)
    assert int(_host(indices).item()) == cols // 2 and t.dtype is dtypes.float32


@pytest.mark.parametrize("dim", [-1, 0, 1])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_matches_numpy(dim: int, dtype: str, log: bool) -> None:
    from runtime.cuda import softmax as SM

    rng = np.random.default_rng(2)
    for base, view in ((rng.standard_normal((5, 300)) * 10, lambda x: x), (rng.standard_normal((40, 3)), lambda x: x.T),
                       (np.zeros((0, 4)), lambda x: x)):
        base = base.astype(dtype)
        a = view(base)
        x = a.astype(np.float64)
        m = x.max(axis=dim, keepdims=True) if x.size else 0
        lse = m + np.log(np.exp(x - m).sum(axis=dim, keepdims=True))
        ref = x - lse if log else np.exp(x - lse)
        got = SM.softmax(_cuda(base, dtype, view), dim, None, False, log)
        tol = 1e-2 if dtype == "float16" else 1e-5
        np.testing.assert_allclose(_host(got).astype(np.float64), ref, rtol=tol, atol=tol)
    half = SM.softmax(_cuda(np.ones((2, 3), np.float16), "float16"), 1, None, True)
    assert half.dtype.name == "float32"


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_rows_of_1_to_10_to_the_5(dtype: str, log: bool) -> None:
    """One row per length: around the warp and block sizes, and one row of 10**5 (each thread loops)."""
    from runtime.cuda import softmax as SM

    rng = np.random.default_rng(3)
    for cols in (1, 2, 31, 32, 33, 255, 256, 257, 1000, 10**5):
        base = (rng.standard_normal((1, cols)) * 5).astype(dtype)
        x = base.astype(np.float64)
        lse = x.max() + np.log(np.exp(x - x.max()).sum())
        ref = x - lse if log else np.exp(x - lse)
        got = _host(SM.softmax(_cuda(base, dtype), -1, None, False, log)).astype(np.float64)
        tol = 1e-2 if dtype == "float16" else 1e-5
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol, err_msg=f"row of {cols}")
        if not log:
            assert abs(got.sum() - 1.0) < (1e-2 if dtype == "float16" else 1e-4), f"row of {cols}"


@pytest.mark.parametrize("src", ["float32", "float64", "int32", "int64", "float16", "bool", "uint8"])
@pytest.mark.parametrize("dst", ["float32", "int8", "float16", "bool", "int64"])
def test_copy_casts_between_layouts(src: str, dst: str) -> None:
    cupy = require_cupy()  # CuPy, or the emulated device's module

    from runtime import dtypes
    from runtime.cuda import copy as C
    from runtime.tensor import Tensor

    rng = np.random.default_rng(3)
    a = (rng.standard_normal((7, 9)) * 5).astype(src)
    out = cupy.zeros((9, 7), dtype=dtypes.as_dtype(dst).np).T  # transposed destination
    C.copy_(Tensor._wrap(out, dtypes.as_dtype(dst)), _cuda(a, src))
    np.testing.assert_array_equal(out.get(), a.astype(dst))
    big = (rng.standard_normal((14, 9)) * 5).astype(src)
    got = C.to_dtype(_cuda(big, src, lambda x: x[::2]), dtypes.as_dtype(dst))
    np.testing.assert_array_equal(_host(got), big[::2].astype(dst))
    row = _cuda(np.arange(9).astype(src), src)  # broadcast a row into every row
    target = Tensor._wrap(cupy.zeros((4, 9), dtypes.as_dtype(dst).np), dtypes.as_dtype(dst))
    C.copy_(target, row)
    np.testing.assert_array_equal(_host(target), np.broadcast_to(np.arange(9).astype(src), (4, 9)).astype(dst))


def test_fill_and_arange() -> None:
    cupy = require_cupy()  # CuPy, or the emulated device's module

    from runtime import dtypes
    from runtime.cuda import copy as C
    from runtime.tensor import Tensor

    base = cupy.zeros((6, 8), np.float16)
    C.fill_(Tensor._wrap(base[:, ::3], dtypes.float16), 2.5)
    expected = np.zeros((6, 8), np.float16)
    expected[:, ::3] = 2.5
    np.testing.assert_array_equal(base.get(), expected)
    for args, dtype in [((10,), "int64"), ((0.0, 1.0, 0.1), "float32"), ((5, -5, -2), "int32"),
                        ((0, 3), "float64")]:
        got = C.arange(*args, dtype=dtype)
        np.testing.assert_allclose(_host(got), np.arange(*args).astype(dtype), rtol=1e-6)


def test_random_is_reproducible_and_matches_the_host_twin() -> None:
    from runtime import dtypes
    from runtime.cuda import random as RND

    state = RND.PhiloxState(1234)
    u = _host(RND.rand((1000,), dtypes.float32, 0, state))
    np.testing.assert_array_equal(u, RND.host_uniform(1000, 0, 1234))
    u64 = _host(RND.rand((33,), dtypes.float64, 0, state))
    np.testing.assert_array_equal(u64, RND.host_uniform(33, 1, 1234, double=True))
    RND.manual_seed(5)
    a = _host(RND.randn((4096,)))
    RND.manual_seed(5)
    np.testing.assert_array_equal(a, _host(RND.randn((4096,))))
    assert abs(a.mean()) < 0.1 and abs(a.std() - 1) < 0.1
    r = _host(RND.randint(-3, 7, (10000,), dtypes.int16))
    assert r.min() == -3 and r.max() == 6 and r.dtype == np.int16


def test_integer_sum_in_its_own_dtype_wraps() -> None:
    """sum/prod with dtype= an integer type give that dtype (computed wide, then wrapped), as on the CPU;
    the integer contractions (einsum, 1-D matmul) rely on it."""
    import generated as G

    a = np.array([[100, 100, 100], [1, 2, -3]], dtype=np.int8)
    t = G.tensor(a, device="cuda")
    r = t.sum(1, dtype=G.int8)
    assert r.dtype == G.int8 and r.cpu().tolist() == (a.astype(np.int64).sum(1)).astype(np.int8).tolist()
    p = t.prod(1, dtype=G.int16)
    assert p.dtype == G.int16 and p.cpu().tolist() == (a.astype(np.int64).prod(1)).astype(np.int16).tolist()
    assert t.sum().dtype == G.int64
    assert G.einsum("ij,ij->i", t, t).dtype == G.int8


@pytest.mark.slow
def test_sum_past_2_to_the_31() -> None:
    cupy = require_cupy()  # CuPy, or the emulated device's module

    from runtime import dtypes
    from runtime.cuda import reduce as R
    from runtime.tensor import Tensor

    # Emulated, the 2 GiB are one 2 MiB page set repeated, but for a distinct last 16 MiB (Note [Repeated
    # pages] in runtime/cuda/emulator/memory.py): every index is real and the pass stays in the cache.
    with _repeated_pages():
        a = cupy.ones(2**31 + 7, dtype=cupy.int8)
        a[-2] = 5  # past 2**31: a wrapped or truncated index misses it
        assert int(_host(R.reduce("sum", Tensor._wrap(a, dtypes.int8)))) == 2**31 + 7 + 4
        values, indices = R.reduce_with_indices("max", Tensor._wrap(a, dtypes.int8), 0)
        assert int(_host(values)) == 5 and int(_host(indices)) == 2**31 + 5


def _repeated_pages() -> Any:
    from runtime.cuda import emulator

    if not emulator.active():
        return contextlib.nullcontext()
    from runtime.cuda.emulator import memory

    return memory.repeated_pages()


@pytest.mark.parametrize("dtype", ["float32", "int64", "bfloat16"])
def test_full_max_and_min_without_a_dim(dtype: str) -> None:
    """`t.max()` / `t.min()` run the indexed max/min kernels, which write an index per output: the launch
    gives them somewhere to write it (it passed a null pointer, which crashed the process)."""
    import generated as G

    values = np.array([[3.0, -7.0, 11.0], [2.0, 5.0, -1.0]])
    t = G.from_numpy(values).cuda().to(getattr(G, dtype))
    assert t.max().item() == 11.0 and t.min().item() == -7.0
    assert t.max().dtype is t.dtype and t.max().shape == ()
