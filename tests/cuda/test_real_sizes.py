"""CUDA kernels at real sizes, against references that see every value: reductions on random values
(rows longer than a block, more rows than the grid has blocks, two-pass) against float64; softmax and
log_softmax rows longer than a block with the maximum past the first block; views whose strides pass
2**32 on the 64-bit paths; every random kernel against its host twin element by element. Runs on a GPU
or on the emulated device (OPGEN_EMULATE_CUDA=1)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import generated as G
from runtime.cuda import emulator
from runtime.cuda import launch as L
from runtime.cuda import random as CR
from runtime.cuda import reduce as R
from runtime.cuda import softmax as CS
from runtime.tensor import Tensor
from tests.launched_kernels import launched, named

pytestmark = pytest.mark.cuda

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int8", "uint8", "int16", "int32", "int64"]
# (rows, cols): rows longer than the largest block (512 threads), more rows than the grid's blocks
# (a block reduces several rows, reusing its shared memory), and one long row (the two-pass kernels).
SHAPES = [(3, 3000), (300, 45), (1, R.TWO_PASS_MIN + 4097)]


def _device(values: np.ndarray, dtype: str) -> Tensor:
    t = G.from_numpy(np.ascontiguousarray(values.astype(np.float32 if dtype == "bfloat16" else dtype))).cuda()
    return t.to(G.bfloat16) if dtype == "bfloat16" else t


def _host(t: Tensor) -> np.ndarray:
    if t.dtype is G.bfloat16:
        t = t.to(G.float32)
    return np.asarray(t.cpu().numpy())


def _random(dtype: str, shape: tuple[int, ...], rng: np.random.Generator, op: str) -> np.ndarray:
    if dtype in FLOATS:
        return rng.uniform(0.998, 1.002, shape) if op == "prod" else rng.uniform(-3, 3, shape)
    if dtype == "bool":
        return rng.random(shape) < (0.999 if op == "all" else 0.001 if op == "any" else 0.5)
    if op == "prod":  # products that fit: ones but 9 entries a row of 2 (unsigned) or of -1 and 2
        v = np.ones(shape, np.int64)
        for row in v:
            picks = rng.choice(row.size, size=min(row.size, 9), replace=False)
            row[picks] = 2 if dtype == "uint8" else rng.choice([-1, 2], size=picks.size)
        return v.astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100) + 1, shape).astype(dtype)


REFERENCE = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "amax": np.max, "amin": np.min, "any": np.any,
             "all": np.all, "var": lambda a, axis: np.var(a, axis=axis, ddof=1),
             "std": lambda a, axis: np.std(a, axis=axis, ddof=1)}
ACCUMULATES_IN_FLOAT = {"float32", "float16", "bfloat16"}
OUTPUT_ROUNDING = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 1e-6, "float64": 1e-13}


@pytest.mark.parametrize("op", sorted(REFERENCE) + ["max", "min"])
def test_reductions_of_random_values_agree_with_float64(op: str) -> None:
    rng = np.random.default_rng(sorted(REFERENCE).index(op) if op in REFERENCE else 99)
    dtypes = FLOATS + (["bool"] if op in ("any", "all", "amax", "amin", "max", "min") else []) + \
        ([] if op in ("var", "std", "mean") else INTS)
    for dtype in dtypes:
        for shape in SHAPES:
            for bits in (None, 64):
                where = f"{op} {dtype} {shape} bits={bits}"
                values = _random(dtype, shape, rng, op)
                with L.force_index_bits(bits):
                    t = _device(values, dtype)
                    held = _host(t).astype(np.float64)  # the values as the device holds them
                    if op in ("max", "min"):
                        with launched() as kernels:
                            got, indices = R.reduce_with_indices(op, t, 1)
                        where += named(kernels)
                        want = held.max(axis=1) if op == "max" else held.min(axis=1)
                        np.testing.assert_array_equal(_host(got).astype(np.float64), want, err_msg=where)
                        arg = held.argmax(axis=1) if op == "max" else held.argmin(axis=1)
                        np.testing.assert_array_equal(_host(indices), arg, err_msg=where)
                        continue
                    with launched() as kernels:
                        got = _host(R.reduce(op, t, 1, False, None, 1.0 if op in ("var", "std") else 0.0))
                    where += named(kernels)
                want = REFERENCE[op](held, axis=1)
                if dtype in INTS + ["bool"] or op in ("amax", "amin", "any", "all"):
                    np.testing.assert_array_equal(got.astype(np.float64), want, err_msg=where)
                    continue
                # rounding of the result, plus the accumulation's error relative to the terms' size
                scale = np.abs(held).sum(axis=1) / (shape[1] if op == "mean" else 1)
                if op in ("var", "std"):
                    scale = np.abs(want) * 4
                accumulate = 2e-5 if dtype in ACCUMULATES_IN_FLOAT else 1e-12
                if op == "prod":
                    scale = np.abs(want) * shape[1]
                    accumulate = 2e-7 if dtype in ACCUMULATES_IN_FLOAT else 1e-15
                bound = OUTPUT_ROUNDING[dtype] * np.abs(want) + accumulate * scale + 1e-300
                err = np.abs(got.astype(np.float64) - want)
                assert (err <= bound).all(), f"{where}: worst error {err.max():.3g} (bound {bound[err.argmax()]:.3g})"


@pytest.mark.parametrize("log", [False, True])
def test_softmax_rows_longer_than_a_block_with_the_maximum_past_the_first_block(log: bool) -> None:
    rng = np.random.default_rng(int(log))
    cols = 3000
    values = rng.uniform(-2, 2, (4, cols))
    values[0] = 0.0
    values[0, 900] = 100.0  # exp(100 - max) overflows unless the max saw column 900
    values[1, 2999] = 60.0
    values[2, 1700] = 30.0
    for dtype in FLOATS:
        for bits in (None, 64):
            with L.force_index_bits(bits):
                x = _device(values, dtype)
                held = _host(x).astype(np.float64)
                shifted = held - held.max(1, keepdims=True)
                total = np.exp(shifted).sum(1, keepdims=True)
                want = shifted - np.log(total) if log else np.exp(shifted) / total
                with launched() as kernels:
                    got = _host(CS.softmax(x, 1, log=log)).astype(np.float64)
            where = f"softmax log={log} {dtype} bits={bits}{named(kernels)}"
            tol = {"float16": 2e-3, "bfloat16": 1.6e-2}.get(dtype, 1e-5)
            bad = np.argwhere(~np.isfinite(got))
            assert bad.size == 0, f"{where}: non-finite outputs in rows {sorted(set(bad[:, 0].tolist()))}"
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=where)


def test_views_with_strides_past_2_to_the_32_take_the_64_bit_paths() -> None:
    """Two int8 elements 2**32 bytes apart (a sparse block of the emulated device: only two pages are
    touched): a 32-bit truncated offset would read the first element twice."""
    base = G.empty(2**32 + 2, dtype=G.int8, device="cuda")
    w = base.as_strided((2, 2), (2**32, 1))  # a 2-d view: rows 2**32 apart
    w.copy_(G.tensor([[3, 4], [5, 6]], dtype=G.int8).cuda())
    assert _host(w).tolist() == [[3, 4], [5, 6]]
    v = base.as_strided((2,), (2**32,))
    checks = [("v + v", lambda: v + v, [6, 10]), ("v * 2 + v", lambda: v * 2 + v, [9, 15]),
              ("w.t() + 1", lambda: w.t() + 1, [[4, 6], [5, 7]]), ("w.sum(1)", lambda: w.sum(1), [7, 11]),
              ("v.sum()", lambda: v.sum(), 8)]
    for text, compute, want in checks:
        with launched() as kernels:
            got = _host(compute()).tolist()
        assert got == want, f"{text} on a view with stride 2**32: got {got}, want {want}{named(kernels)}"
        if emulator.active() and text != "v.sum()":  # a 64-bit strided path ran, not a dense copy first
            assert any(k.endswith(("strided64", "rows64")) for k in kernels), f"{text}: {kernels}"


def _rne_bfloat16(x: np.ndarray) -> np.ndarray:
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), rounded)


def _stored(values: np.ndarray, dtype: str) -> np.ndarray:
    """Values of the compute type rounded to the stored dtype, as the device's cast does."""
    if dtype == "bfloat16":
        return _rne_bfloat16(values.astype(np.float32))
    return values.astype(dtype)


def _compare(got: np.ndarray, want: np.ndarray, what: str, ulps: float = 0.0) -> None:
    if ulps == 0.0 or emulator.active():  # the emulator rounds as the twin; a GPU may contract to FMA
        np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=what)
    else:
        np.testing.assert_allclose(got, want, rtol=ulps, err_msg=what)


@pytest.mark.parametrize("dtype", FLOATS + INTS + ["bool"])
def test_every_random_kernel_matches_its_host_twin(dtype: str) -> None:
    n = 3001  # several blocks, and a tail group
    state = CR.PhiloxState(seed=1234 + len(dtype), offset=7)
    t = G.empty(n, dtype=getattr(G, dtype), device="cuda")
    if dtype in FLOATS:
        double = dtype == "float64"
        acc: Any = np.float64 if double else np.float32
        seed, offset = state.get_state()
        got = _host(CR.uniform_(t, -2.0, 3.0, state=state))
        low, high = acc(-2.0), acc(3.0)
        draws = low + CR.host_uniform(n, offset, seed, double).astype(acc) * (high - low)
        stored = _stored(draws, dtype)
        stored = np.where(stored.astype(acc) < high, stored, _stored(np.array([low]), dtype)[0])
        _compare(got, stored.astype(np.float64).astype(got.dtype), f"uniform_ {dtype}", 1e-6)
        seed, offset = state.get_state()
        got = _host(CR.normal_(t, 1.0, 0.5, state=state))
        u = CR.host_uniform(-(-n // 4) * 4, offset, seed, double).astype(np.float64)
        u1, u2 = u[0::2], u[1::2]
        r = np.sqrt(-2.0 * np.log(1.0 - u1))
        z = np.stack([r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)], axis=1).reshape(-1)[:n]
        want = 1.0 + z * 0.5
        tol = {"float64": 1e-12, "float32": 2e-6, "float16": 1e-3, "bfloat16": 8e-3}[dtype]
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol, err_msg=f"normal_ {dtype}")
    seed, offset = state.get_state()
    hi = 2 if dtype == "bool" else 100
    got = _host(CR.random_(t, 0, hi, state=state)).astype(np.int64)
    words = CR.philox_words(-(-n // 2), offset, seed)
    bits = ((words[:, 1::2].astype(np.uint64) << np.uint64(32)) | words[:, 0::2].astype(np.uint64)).reshape(-1)[:n]
    np.testing.assert_array_equal(got, (bits % np.uint64(hi)).astype(np.int64), err_msg=f"random_ {dtype}")
