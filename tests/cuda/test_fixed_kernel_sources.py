"""The fixed CUDA kernels without a GPU: every kernel name the launchers form exists in the generated sources,
Philox matches Random123's known answers, and the launchers' pure helpers (row layouts, arange lengths,
16-bit scalar bits) match NumPy."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from codegen import gen_cuda
from codegen.jinja_env import environment
from codegen.render import cuda_kernels
from runtime import dtypes
from runtime.cuda import copy as C
from runtime.cuda import random as RND
from runtime.cuda import reduce as R

ROOT = Path(__file__).resolve().parents[2]
ENTRY = re.compile(r'extern "C" __global__ void (\w+)\(')


@pytest.fixture(scope="module")
def kernels() -> dict[str, set[str]]:
    env = environment(ROOT)
    return {path: set(ENTRY.findall(text)) for path, text in cuda_kernels.fixed_sources(env).items()}


def test_launcher_names_exist(kernels: dict[str, set[str]]) -> None:
    names = [d.name for d in dtypes.ALL_DTYPES]
    for op, (_, op_dtypes, _) in gen_cuda.REDUCTIONS.items():
        have = kernels[f"cuda/reduce/{op}.cu"]
        for d in op_dtypes:
            for bits in (32, 64):
                assert {f"reduce_{op}__{d}__rows{bits}", f"reduce_{op}__{d}__partial{bits}"} <= have
            assert f"reduce_{op}__{d}__finish" in have
    for src in names:
        have = kernels[f"cuda/copy/{src}.cu"]
        assert {f"copy__{src}__{dst}__{p}{b}" for dst in names for p in ("contig", "strided") for b in (32, 64)} \
            == have
    fill = kernels["cuda/fill.cu"]
    for d in names:
        assert {f"fill__{d}__contig32", f"fill__{d}__strided64"} <= fill
        assert (f"arange__{d}32" in fill) == (d != "bool")
    rnd = kernels["cuda/random.cu"]
    assert {f"uniform__{d}" for d in gen_cuda.FLOATING} | {f"normal__{d}" for d in gen_cuda.FLOATING} <= rnd
    assert {f"randint__{d}" for d in names if d != "bool"} <= rnd
    sm = kernels["cuda/softmax.cu"]
    for kind in ("softmax", "log_softmax"):
        for i, o in gen_cuda.SOFTMAX_PAIRS:
            assert {f"{kind}__{i}__{o}32", f"{kind}__{i}__{o}64"} <= sm


def test_fixed_sources_are_deterministic() -> None:
    env = environment(ROOT)
    assert cuda_kernels.fixed_sources(env) == cuda_kernels.fixed_sources(env)


def test_reduction_dtypes_follow_pytorch() -> None:
    by_name = {(r.op, r.dtype): r for op in gen_cuda.REDUCTIONS for r in gen_cuda.reduce_instances(op)}
    assert by_name["sum", "int32"].out_dtype == "int64" and by_name["sum", "int32"].acc_t == "long long"
    assert by_name["sum", "float16"].out_dtype == "float16" and by_name["sum", "float16"].acc_t == "float"
    assert by_name["any", "float32"].out_dtype == "bool"
    assert by_name["max", "int8"].out_dtype == "int8"
    assert ("var", "int32") not in by_name and ("mean", "int64") not in by_name


# Random123's known-answer vectors for Philox-4x32-10: (counter words, key words) -> output words.
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize(("ctr", "key", "expected"), KAT)
def test_philox_known_answers(ctr: tuple[int, ...], key: tuple[int, ...], expected: tuple[int, ...]) -> None:
    group, offset, seed = ctr[0] | ctr[1] << 32, ctr[2] | ctr[3] << 32, key[0] | key[1] << 32
    assert RND.philox4x32(group, offset, seed) == expected
    assert tuple(int(w) for w in RND.philox_words(1, offset, seed)[0]) == RND.philox4x32(0, offset, seed)


def test_host_uniform_is_in_range_and_reproducible() -> None:
    for double in (False, True):
        u = RND.host_uniform(10_001, 3, 42, double)
        assert u.shape == (10_001,) and 0.0 <= u.min() and u.max() < 1.0
        assert abs(float(u.mean()) - 0.5) < 0.02
        np.testing.assert_array_equal(u, RND.host_uniform(10_001, 3, 42, double))
        assert not np.array_equal(u, RND.host_uniform(10_001, 4, 42, double))


def test_philox_state_advances_and_reseeds() -> None:
    s = RND.PhiloxState(7)
    assert s.advance() == (7, 0) and s.advance() == (7, 1) and s.get_state() == (7, 2)
    s.set_state((9, 5))
    assert s.advance() == (9, 5)
    RND.manual_seed(123)
    assert RND.default_state(3).get_state() == (123, 0)
    RND.default_state(3).advance()
    RND.manual_seed(123)
    assert RND.default_state(3).get_state() == (123, 0)


def test_row_strides_avoid_copies_where_possible() -> None:
    # contiguous (4, 5): reduce dim 1 -> rows of stride 5, columns of stride 1; dim 0 -> columns walk down
    assert R.row_strides((4, 5), (5, 1), (1,)) == (5, 1)
    assert R.row_strides((4, 5), (5, 1), (0,)) == (1, 5)
    assert R.row_strides((2, 3, 4), (12, 4, 1), (1, 2)) == (12, 1)
    assert R.row_strides((2, 3, 4), (12, 4, 1), (0, 2)) is None  # kept dim in between: copy first
    assert R.row_strides((3,), (1,), (0,)) == (0, 1)


def test_normalize_dims_and_shapes() -> None:
    assert R.normalize_dims(None, 3) == (0, 1, 2)
    assert R.normalize_dims([], 2) == (0, 1)
    assert R.normalize_dims(-1, 3) == (2,)
    assert R.normalize_dims(0, 0) == ()
    with pytest.raises(IndexError):
        R.normalize_dims(3, 3)
    with pytest.raises(RuntimeError, match="multiple times"):
        R.normalize_dims([0, -2], 2)
    assert R.reduced_shape((2, 3, 4), (1,), True) == (2, 1, 4)
    assert R.row_layout((2, 3, 4), (0, 2)) == ((1, 0, 2), 3, 8)


@pytest.mark.parametrize(("args", "n"), [((0, 10, 1), 10), ((0, 10, 3), 4), ((1.0, 2.0, 0.25), 4),
                                         ((10, 0, -3), 4), ((0.0, 1.0, 0.1), 10), ((5, 5, 1), 0)])
def test_arange_length_matches_numpy(args: tuple[float, float, float], n: int) -> None:
    assert C.arange_length(*args) == n == len(np.arange(*args))


def test_arange_length_errors() -> None:
    with pytest.raises(RuntimeError, match="nonzero"):
        C.arange_length(0, 1, 0)
    with pytest.raises(RuntimeError, match="inconsistent"):
        C.arange_length(0, 1, -1)


def test_scalar_bits() -> None:
    assert int(C.scalar_bits(1.0, dtypes.float16)) == 0x3C00
    assert int(C.scalar_bits(1.0, dtypes.bfloat16)) == 0x3F80
    assert int(C.scalar_bits(-2.5, dtypes.bfloat16)) == 0xC020
    assert int(C.scalar_bits(float("nan"), dtypes.bfloat16)) == 0x7FC0
    assert C.scalar_bits(3, dtypes.bool_) == np.True_
    assert C.scalar_bits(-1, dtypes.int64) == np.int64(-1)
