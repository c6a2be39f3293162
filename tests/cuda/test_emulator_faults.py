"""What a GPU would reject or race on, reported by the host engine as Python exceptions (Note [Faults] and
Note [Schedules that expose races] in runtime/cuda/emulator/opgen_emulate.h), on small hand-written
kernels. Needs a C++ compiler, not a GPU."""

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

// Rows of a block reduction through one shared array; `trailing` is the barrier after the read.
extern "C" __global__ void rows_sum(const float* in, float* out, int rows, int cols, int trailing) {
  OPGEN_SHARED_ARRAY(float, partial, 32);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int r = blockIdx.x; r < rows; r += gridDim.x) {
    float v = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) v += in[r * cols + j];
    for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
      float s = 0.0f;
      for (int w = 0; w < (int)(blockDim.x >> 5); ++w) s += partial[w];
      out[r] = s;
    }
    if (trailing) __syncthreads();
  }
}

// Reads a shared array before any thread of the block wrote it.
extern "C" __global__ void read_fresh_shared(float* out) {
  OPGEN_SHARED_ARRAY(float, cells, 64);
  if (blockIdx.x == 0) cells[threadIdx.x] = 1.0f;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = cells[threadIdx.x];
}

extern "C" __global__ void shared_index(int* out, int index) {
  OPGEN_SHARED_ARRAY(int, cells, 8);
  if (threadIdx.x == 0) cells[index] = 1;
  out[0] = 0;
}

// Every block writes out[0] (a race between blocks), or adds to it atomically (none).
extern "C" __global__ void all_blocks_write(float* out, int atomic) {
  if (threadIdx.x != 0) return;
  if (atomic) atomicAdd(out, 1.0f); else out[0] = (float)blockIdx.x;
}

extern "C" __global__ void shuffle_mask(const float* in, float* out, unsigned mask) {
  out[threadIdx.x] = __shfl_down_sync(mask, in[threadIdx.x], 1);
}

extern "C" __global__ void shuffle_sites(float* out) {
  float v = threadIdx.x;
  if (threadIdx.x & 1) v = __shfl_xor_sync(0xffffffffu, v, 1);
  else v = __shfl_xor_sync(0xffffffffu, v, 1);
  out[threadIdx.x] = v;
}

extern "C" __global__ void vector_copy(const float* in, float* out, long long offset) {
  const opgen::Pack<4, float> p = opgen::load_pack<4>(in + offset, threadIdx.x);
  opgen::store_pack<4>(out, threadIdx.x, p);
}

extern "C" __global__ void read_address(const float* in, unsigned long long address, float* out) {
  out[0] = *reinterpret_cast<const float*>(address);
}

extern "C" __global__ void dynamic_reverse(const float* in, float* out, float* seen) {
  extern __shared__ __align__(16) float smem[];
  const int t = threadIdx.x, n = blockDim.x;
  seen[blockIdx.x * n + t] = smem[t];
  __syncthreads();
  smem[t] = in[blockIdx.x * n + t];
  __syncthreads();
  out[blockIdx.x * n + t] = smem[n - 1 - t];
}

extern "C" __global__ void big_static(int* out) {
  OPGEN_SHARED_ARRAY(int, cells, 10000);  // 40,000 bytes
  cells[threadIdx.x] = 1;
  out[0] = cells[0];
}

extern "C" __global__ void nothing(int* out) { out[0] = 1; }
"""


class _Arr:
    """A NumPy array passed by address; as an ndarray with `.data.ptr` it is an array argument whose extent
    the engine knows (what device arrays are to the launcher)."""

    def __new__(cls, a: np.ndarray) -> np.ndarray:
        view = a.view(_Dev)
        view.__dict__["data"] = type("Ptr", (), {"ptr": a.ctypes.data})()
        return view


class _Dev(np.ndarray):
    data = None  # type: ignore[assignment]


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> tuple[E.HostLibraries, str]:
    root = tmp_path_factory.mktemp("emu-faults")
    source = root / "faults.cu"
    source.write_text(KERNELS)
    libs = E.HostLibraries(root / "cache")
    libs.load(str(source))
    return libs, str(source)


def _fn(lib: tuple[E.HostLibraries, str], name: str) -> E.HostFunction:
    libs, source = lib
    return E.HostFunction(libs.load(source), name, source)


def _rows(rows: int = 6, cols: int = 300) -> tuple[np.ndarray, np.ndarray]:
    x = np.random.default_rng(0).integers(-4, 5, size=(rows, cols)).astype(np.float32)
    return x, np.zeros(rows, np.float32)


def test_the_block_reduction_with_its_barriers_is_exact_under_racecheck(lib) -> None:
    x, out = _rows()
    with E.racecheck():
        _fn(lib, "rows_sum")((2,), (128,), (_Arr(x), _Arr(out), np.int32(6), np.int32(300), np.int32(1)))
    np.testing.assert_array_equal(out, x.sum(axis=1))


def test_a_missing_trailing_barrier_is_a_race_racecheck_names(lib) -> None:
    x, out = _rows()
    with E.racecheck(), pytest.raises(E.EmulationError) as info:
        _fn(lib, "rows_sum")((2,), (128,), (_Arr(x), _Arr(out), np.int32(6), np.int32(300), np.int32(0)))
    message = str(info.value)
    assert "rows_sum" in message and "shared-memory race on 'partial'" in message
    assert "no __syncthreads between" in message


def test_a_missing_trailing_barrier_gives_wrong_rows_under_the_random_schedule(lib) -> None:
    """Without racecheck, some seed's schedule lets a warp overwrite a partial before it is read."""
    x, out = _rows()
    wrong = 0
    for seed in range(8):
        E.set_block_order_seed(seed)
        _fn(lib, "rows_sum")((2,), (128,), (_Arr(x), _Arr(out), np.int32(6), np.int32(300), np.int32(0)))
        wrong += not np.array_equal(out, x.sum(axis=1))
    E.set_block_order_seed(0)
    assert wrong > 0


def test_shared_memory_is_poisoned_at_every_block(lib) -> None:
    out = np.zeros(4 * 64, np.float32)
    E.set_block_order_seed(3)
    _fn(lib, "read_fresh_shared")((4,), (64,), (_Arr(out),))
    E.set_block_order_seed(0)
    rows = out.reshape(4, 64)
    assert (rows[0] == 1.0).all() and np.isnan(rows[1:]).all()  # 0xFF bytes: NaN, not block 0's values


def test_a_shared_index_out_of_bounds_is_an_error(lib) -> None:
    with pytest.raises(E.EmulationError, match=r"shared-memory index 8 out of the bounds of 'cells'"):
        _fn(lib, "shared_index")((1,), (32,), (_Arr(np.zeros(1, np.int32)), np.int32(8)))


def test_two_blocks_writing_one_address_is_a_race_unless_atomic(lib) -> None:
    out = np.zeros(1, np.float32)
    _fn(lib, "all_blocks_write")((4,), (32,), (_Arr(out), np.int32(0)))  # not checked without racecheck
    with E.racecheck():
        with pytest.raises(E.EmulationError, match="global-memory race: blocks .* both wrote address"):
            _fn(lib, "all_blocks_write")((4,), (32,), (_Arr(out), np.int32(0)))
        out[0] = 0
        _fn(lib, "all_blocks_write")((4,), (32,), (_Arr(out), np.int32(1)))
    assert out[0] == 4.0


def test_a_shuffle_mask_leaving_out_the_calling_lane_is_an_error(lib) -> None:
    x, out = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    _fn(lib, "shuffle_mask")((1,), (32,), (_Arr(x), _Arr(out), np.uint32(0xFFFFFFFF)))
    np.testing.assert_array_equal(out, np.append(x[1:], x[31]))
    with pytest.raises(E.EmulationError, match=r"__shfl_down_sync called by lane (1[6-9]|2\d|3[01]) with mask "
                                               r"0x0000ffff, which leaves the calling lane out"):
        _fn(lib, "shuffle_mask")((1,), (32,), (_Arr(x), _Arr(out), np.uint32(0xFFFF)))


def test_lanes_at_different_shuffle_sites_are_an_error(lib) -> None:
    with pytest.raises(E.EmulationError, match=r"reach different warp-synchronous calls: lane 0 "
                                               r"__shfl_xor_sync at .*faults\.cu:\d+, lane \d+ __shfl_xor_sync"):
        _fn(lib, "shuffle_sites")((1,), (32,), (_Arr(np.zeros(32, np.float32)),))


def test_misaligned_and_out_of_range_vector_accesses_are_errors(lib) -> None:
    x, out = np.arange(256, dtype=np.float32), np.zeros(256, np.float32)
    assert x.ctypes.data % 16 == 0 and out.ctypes.data % 16 == 0
    _fn(lib, "vector_copy")((1,), (32,), (_Arr(x), _Arr(out), np.int64(0)))
    np.testing.assert_array_equal(out[:128], x[:128])
    with pytest.raises(E.EmulationError, match=r"misaligned vector load: 16 bytes at 0x[0-9a-f]+, which is not "
                                               r"16-byte aligned"):
        _fn(lib, "vector_copy")((1,), (32,), (_Arr(x), _Arr(out), np.int64(1)))
    with pytest.raises(E.EmulationError, match="out-of-bounds vector load"):
        _fn(lib, "vector_copy")((1,), (64,), (_Arr(x), _Arr(out), np.int64(4)))


def test_an_invalid_address_is_an_error_not_a_crash(lib) -> None:
    out = np.zeros(1, np.float32)
    for address in (0, 8, 0xFFFF_FFFF_0000):
        with pytest.raises(E.EmulationError, match="invalid memory access at address"):
            _fn(lib, "read_address")((1,), (1,), (_Arr(out), np.uint64(address), _Arr(out)))
    _fn(lib, "nothing")((1,), (1,), (_Arr(np.zeros(1, np.int32)),))  # usable after a fault


def test_raw_blocks_of_the_emulated_device_sit_between_guard_pages(lib) -> None:
    from runtime.cuda.emulator import memory

    device = memory.HostBackedDevice(1 << 30)
    size = 4 * memory.PAGE  # a whole number of pages: guarded at both ends (else at the upper one)
    addr = device.malloc(size)
    out = np.zeros(1, np.float32)
    fn = _fn(lib, "read_address")
    fn((1,), (1,), (_Arr(out), np.uint64(addr + size - 4), _Arr(out)))  # the last float: poisoned
    assert np.isnan(out[0])
    for outside in (addr + size, addr - 4):  # just past either end
        with pytest.raises(E.EmulationError, match="invalid memory access at address"):
            fn((1,), (1,), (_Arr(out), np.uint64(outside), _Arr(out)))
    device.free(addr)


def test_dynamic_shared_memory(lib) -> None:
    x = np.arange(3 * 64, dtype=np.float32)
    out, seen = np.zeros_like(x), np.zeros_like(x)
    _fn(lib, "dynamic_reverse")((3,), (64,), (_Arr(x), _Arr(out), _Arr(seen)), shared_mem=64 * 4)
    np.testing.assert_array_equal(out.reshape(3, 64), x.reshape(3, 64)[:, ::-1])
    assert np.isnan(seen).all()  # poisoned at every block start, not the previous block's values


def test_launch_limits(lib) -> None:
    out = np.zeros(1, np.int32)
    fn = _fn(lib, "nothing")
    for block in ((2048,), (1, 1, 65), (1025, 1)):
        with pytest.raises(E.EmulationError, match="invalid block size"):
            fn((1,), block, (_Arr(out),))
    for grid in ((1, 70000), (1, 1, 65536), (0,)):
        with pytest.raises(E.EmulationError, match="invalid grid size"):
            fn(grid, (1,), (_Arr(out),))
    with pytest.raises(E.EmulationError, match="bytes of dynamic shared memory requested"):
        fn((1,), (1,), (_Arr(out),), shared_mem=64 * 1024)
    big = _fn(lib, "big_static")
    big((1,), (32,), (_Arr(out),), shared_mem=9000)  # 49,000 bytes in all: fits
    with pytest.raises(E.EmulationError, match="too much shared memory: 40000 bytes static .* plus 10000 dynamic"):
        big((1,), (32,), (_Arr(out),), shared_mem=10000)


def test_host_only_functions_do_not_compile(tmp_path: Path) -> None:
    source = tmp_path / "host_only.cu"
    source.write_text('extern "C" __global__ void k(int* out) { out[threadIdx.x] = rand(); }\n')
    with pytest.raises(CC.CudaCompileError, match="rand"):
        E.HostLibraries(tmp_path / "cache").build(str(source))
