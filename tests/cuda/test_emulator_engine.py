"""The host execution engine (runtime/cuda/emulator/engine.py, opgen_emulate.h) on small hand-written
kernels: barriers, warp shuffles, deadlock and divergence detection, block order, compile errors, the disk
cache and the software half conversions. Needs a C++ compiler, not a GPU."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from runtime.cuda import compile as CC
from runtime.cuda.emulator import engine as E

pytestmark = pytest.mark.skipif(shutil.which("g++") is None and shutil.which("clang++") is None,
                                reason="the host engine needs a C++ compiler")

KERNELS = r"""
#include "opgen_types.cuh"

// Block sum through shared memory and warp shuffles (the shape of opgen_reduce.cuh's block_combine).
extern "C" __global__ void block_sum(const float* in, float* out, unsigned n) {
  __shared__ float warp_sums[32];
  float v = 0.0f;
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) v += in[blockIdx.x * n + i];
  for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (unsigned w = 0; w < (blockDim.x + 31) / 32; ++w) s += warp_sums[w];
    out[blockIdx.x] = s;
  }
  __syncthreads();
}

// Each thread reads its neighbour's slot: correct only with the barrier.
extern "C" __global__ void rotate(const int* in, int* out, int with_barrier) {
  __shared__ int slots[1024];
  slots[threadIdx.x] = in[threadIdx.x];
  if (with_barrier) __syncthreads();
  out[threadIdx.x] = slots[(threadIdx.x + 1) % blockDim.x];
}

extern "C" __global__ void half_barrier(int* out) {
  if (threadIdx.x < 16) __syncthreads();
  out[threadIdx.x] = 1;
}

extern "C" __global__ void barrier_in_loop(int* out, int rounds_for_odd) {
  const int rounds = (threadIdx.x & 1) ? rounds_for_odd : 1;
  for (int r = 0; r < rounds; ++r) __syncthreads();
  out[threadIdx.x] = rounds;
}

extern "C" __global__ void warp_divergent(int* out) {
  if (threadIdx.x % 2) out[threadIdx.x] = __shfl_down_sync(0xffffffffu, 1, 1);
}

extern "C" __global__ void block_order(unsigned* order, unsigned* counter) {
  if (threadIdx.x == 0) order[atomicAdd(counter, 1u)] = blockIdx.x;
}

extern "C" __global__ void votes(const int* in, unsigned* ballots, int* any, int* all) {
  const int p = in[threadIdx.x];
  const unsigned b = __ballot_sync(0xffffffffu, p);
  const int a = __any_sync(0xffffffffu, p), l = __all_sync(0xffffffffu, p);
  if ((threadIdx.x & 31) == 0) {
    ballots[threadIdx.x >> 5] = b;
    any[threadIdx.x >> 5] = a;
    all[threadIdx.x >> 5] = l;
  }
}

extern "C" __global__ void shuffles(const int* in, int* up, int* xr, int* idx) {
  const int v = in[threadIdx.x];
  up[threadIdx.x] = __shfl_up_sync(0xffffffffu, v, 3);
  xr[threadIdx.x] = __shfl_xor_sync(0xffffffffu, v, 5);
  idx[threadIdx.x] = __shfl_sync(0xffffffffu, v, 7, 16);
}

extern "C" __global__ void to_half(const float* in, unsigned short* out, float* back, unsigned n) {
  OPGEN_GRID_STRIDE(unsigned, i, n) {
    const opgen::half h = opgen::cast<opgen::half>(in[i]);
    out[i] = h.x;
    back[i] = opgen::cast<float>(h);
  }
}

extern "C" __global__ void mulhi(const unsigned* a, const unsigned* b, unsigned* hi32,
                                 const unsigned long long* c, const unsigned long long* d,
                                 unsigned long long* hi64) {
  hi32[threadIdx.x] = __umulhi(a[threadIdx.x], b[threadIdx.x]);
  hi64[threadIdx.x] = __umul64hi(c[threadIdx.x], d[threadIdx.x]);
}
"""


class _Arr:
    """A NumPy array passed to a kernel by address (what a device array is to the launcher)."""

    def __init__(self, a: np.ndarray) -> None:
        self.a = a
        self.data = type("Ptr", (), {"ptr": a.ctypes.data})()


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> tuple[E.HostLibraries, str]:
    root = tmp_path_factory.mktemp("emu")
    source = root / "probe.cu"
    source.write_text(KERNELS)
    libs = E.HostLibraries(root / "cache")
    libs.load(str(source))
    return libs, str(source)


def _fn(lib: tuple[E.HostLibraries, str], name: str) -> E.HostFunction:
    libs, source = lib
    return E.HostFunction(libs.load(source), name, source)


@pytest.mark.parametrize("threads", [32, 64, 96, 256, 1024])
def test_block_sum_with_shuffles_and_shared_memory(lib, threads: int) -> None:
    rng = np.random.default_rng(threads)
    n, blocks = 1000, 3
    x = rng.integers(-8, 8, size=(blocks, n)).astype(np.float32)
    out = np.zeros(blocks, np.float32)
    _fn(lib, "block_sum")((blocks,), (threads,), (_Arr(x), _Arr(out), np.uint32(n)))
    np.testing.assert_array_equal(out, x.sum(axis=1))


def test_a_full_mask_in_a_partial_warp_is_reported(lib) -> None:
    x = np.ones((1, 100), np.float32)
    with pytest.raises(E.EmulationError, match="names lanes that do not exist"):
        _fn(lib, "block_sum")((1,), (48,), (_Arr(x), _Arr(np.zeros(1, np.float32)), np.uint32(100)))


def test_a_missing_barrier_reads_unwritten_shared_memory(lib) -> None:
    x = np.arange(64, dtype=np.int32)
    out = np.full(64, -1, np.int32)
    _fn(lib, "rotate")((1,), (64,), (_Arr(x), _Arr(out), np.int32(1)))
    np.testing.assert_array_equal(out, np.roll(x, -1))
    x2 = x + 100  # without the barrier, thread 0 runs to the end before thread 1 wrote its slot
    _fn(lib, "rotate")((1,), (64,), (_Arr(x2), _Arr(out), np.int32(0)))
    assert not np.array_equal(out, np.roll(x2, -1))


def test_barrier_in_divergent_code_is_an_error_not_a_hang(lib) -> None:
    out = np.zeros(32, np.int32)
    with pytest.raises(E.EmulationError, match="divergent __syncthreads"):
        _fn(lib, "half_barrier")((1,), (32,), (_Arr(out),))
    with pytest.raises(E.EmulationError, match="half_barrier|barrier_in_loop|divergent"):
        _fn(lib, "barrier_in_loop")((1,), (64,), (_Arr(np.zeros(64, np.int32)), np.int32(3)))
    with pytest.raises(E.EmulationError, match="warp"):
        _fn(lib, "warp_divergent")((1,), (32,), (_Arr(out),))
    # the library is usable after an aborted launch
    _fn(lib, "barrier_in_loop")((1,), (64,), (_Arr(np.zeros(64, np.int32)), np.int32(1)))


def test_blocks_run_in_a_seeded_shuffled_order(lib) -> None:
    orders = []
    for seed in (1, 2, 1):
        E.set_block_order_seed(seed)
        fn = _fn(lib, "block_order")  # a fresh function: its launch counter (part of the seed) is 0
        order = np.zeros(64, np.uint32)
        counter = np.zeros(1, np.uint32)
        fn((64,), (32,), (_Arr(order), _Arr(counter)))
        assert sorted(order.tolist()) == list(range(64))
        orders.append(order.tolist())
    E.set_block_order_seed(0)
    assert orders[0] != list(range(64))
    assert orders[0] == orders[2] and orders[0] != orders[1]


def test_votes_and_shuffles(lib) -> None:
    rng = np.random.default_rng(0)
    threads = 96
    p = (rng.random(threads) < 0.5).astype(np.int32)
    p[64:] = 1
    ballots, anys, alls = np.zeros(3, np.uint32), np.zeros(3, np.int32), np.zeros(3, np.int32)
    _fn(lib, "votes")((1,), (threads,), (_Arr(p), _Arr(ballots), _Arr(anys), _Arr(alls)))
    for w in range(3):
        lanes = p[32 * w:32 * w + 32]
        assert ballots[w] == sum(int(b) << i for i, b in enumerate(lanes))
        assert anys[w] == int(lanes.any()) and alls[w] == int(lanes.all())
    v = np.arange(64, dtype=np.int32) * 10
    up, xr, idx = (np.zeros(64, np.int32) for _ in range(3))
    _fn(lib, "shuffles")((1,), (64,), (_Arr(v), _Arr(up), _Arr(xr), _Arr(idx)))
    lane = np.arange(64) % 32
    base = np.arange(64) - lane
    np.testing.assert_array_equal(up, np.where(lane >= 3, v[np.arange(64) - 3 * (lane >= 3)], v))
    np.testing.assert_array_equal(xr, v[base + (lane ^ 5)])
    np.testing.assert_array_equal(idx, v[base + (lane // 16) * 16 + 7])


def test_software_half_conversion_matches_numpy(lib) -> None:
    rng = np.random.default_rng(0)
    special = np.array([0.0, -0.0, 1.0, 65504.0, 65519.99, 65520.0, 1e6, -1e6, np.inf, -np.inf, np.nan,
                        2.0**-14, 2.0**-24, 2.0**-25, 3 * 2.0**-26, 2.0**-26, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11,
                        5.960464477539063e-08, 6.097555160522461e-05], np.float32)
    bits = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = np.concatenate([special, bits, rng.standard_normal(5000).astype(np.float32) * 1e-5])
    n = x.size
    out, back = np.zeros(n, np.uint16), np.zeros(n, np.float32)
    _fn(lib, "to_half")((8,), (128,), (_Arr(x), _Arr(out), _Arr(back), np.uint32(n)))
    with np.errstate(over="ignore"):
        ref = x.astype(np.float16)
    finite = ~np.isnan(x)
    np.testing.assert_array_equal(out[finite], ref.view(np.uint16)[finite])
    assert np.isnan(ref[~finite]).all() and ((out[~finite] & 0x7C00) == 0x7C00).all()
    np.testing.assert_array_equal(back[finite], ref[finite].astype(np.float32))


def test_high_words_of_products(lib) -> None:
    rng = np.random.default_rng(1)
    a, b = (rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32) for _ in range(2))
    c, d = (rng.integers(0, 2**63, 64, dtype=np.uint64) * 2 + 1 for _ in range(2))
    hi32, hi64 = np.zeros(64, np.uint32), np.zeros(64, np.uint64)
    _fn(lib, "mulhi")((1,), (64,), (_Arr(a), _Arr(b), _Arr(hi32), _Arr(c), _Arr(d), _Arr(hi64)))
    assert hi32.tolist() == [(int(x) * int(y)) >> 32 for x, y in zip(a, b, strict=True)]
    assert hi64.tolist() == [(int(x) * int(y)) >> 64 for x, y in zip(c, d, strict=True)]


def test_invalid_launches_are_refused(lib) -> None:
    out = np.zeros(1, np.int32)
    with pytest.raises(E.EmulationError, match="invalid block size"):
        _fn(lib, "half_barrier")((1,), (2048,), (_Arr(out),))
    with pytest.raises(RuntimeError, match="no kernel 'nope'"):
        _fn(lib, "nope")
    with pytest.raises(TypeError, match="unsupported kernel argument"):
        _fn(lib, "half_barrier")((1,), (1,), ("text",))


def test_kernels_are_found_in_their_namespaces() -> None:
    src = 'namespace a { namespace b { extern "C" __global__ void k1(int x) {} }  // }\n}\n' \
          'extern "C" __global__ void k2() { /* { */ }\nnamespace c {\nextern "C" __global__ void k3() {}\n}'
    assert E.kernel_entries(src) == [("a::b::k1", "k1"), ("k2", "k2"), ("c::k3", "k3")]


def test_compile_errors_show_numbered_source_and_the_cache_is_keyed_by_source(tmp_path: Path) -> None:
    bad = tmp_path / "bad.cu"
    bad.write_text('#include "opgen_types.cuh"\n\nextern "C" __global__ void k(int* out) {\n'
                   '  out[threadIdx.x] = undeclared_name;\n}\n')
    libs = E.HostLibraries(tmp_path / "cache")
    with pytest.raises(CC.CudaCompileError) as info:
        libs.build(str(bad))
    message = str(info.value)
    assert "bad.cu, lines" in message and ">> 4 |   out[threadIdx.x] = undeclared_name;" in message
    assert "undeclared_name" in message
    good = tmp_path / "good.cu"
    good.write_text('extern "C" __global__ void k(int* out) { out[threadIdx.x] = 7; }\n')
    CC._SOURCES.pop(str(good), None)
    first = libs.build(str(good))
    again = E.HostLibraries(tmp_path / "cache")
    assert again.build(str(good)) == first and again.compiles == 0  # from the disk cache
    good.write_text('extern "C" __global__ void k(int* out) { out[threadIdx.x] = 8; }\n')
    CC._SOURCES.pop(str(good), None)
    assert again.build(str(good)) != first and again.compiles == 1
