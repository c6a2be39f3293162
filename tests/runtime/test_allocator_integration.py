"""memory.py (torch.cuda's memory API), the CuPy hook with a fake CuPy module, the pinned host allocator."""

from __future__ import annotations

import gc
import importlib.util
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from runtime.cuda import cupy_pool, emulator, host_allocator, memory
from runtime.cuda.allocator import CachingAllocator, RawOutOfMemory
from runtime.cuda.device import require_cupy
from runtime.cuda.host_allocator import (
    CachingHostAllocator,
    SimulatedHostMemory,
    copy_host_to_device_async,
    host_block_size,
    pin_memory,
    pinned_empty,
)
from runtime.cuda.simulated import SimulatedDevice

MiB = 1 << 20


@pytest.fixture
def sim() -> Any:
    dev = SimulatedDevice(1 << 30)
    alloc = CachingAllocator(dev)
    memory.set_allocator_for_testing(0, alloc)
    yield dev, alloc
    memory.set_allocator_for_testing(0, None)


class FakeRuntimeError(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"cudaError {status}")
        self.status = status


class FakeCupy:
    """Just enough of ``cupy`` for cupy_pool and host_allocator, over a SimulatedDevice."""

    def __init__(self, dev: SimulatedDevice) -> None:
        self.dev = dev
        self.allocator: Any = None
        self.copies: list[tuple] = []

        def malloc(n: int) -> int:
            try:
                return dev.malloc(n)
            except RawOutOfMemory:
                raise FakeRuntimeError(2) from None

        class Event:
            def __init__(self, disable_timing: bool = False) -> None:
                self.event: Any = None

            def record(self, stream: Any) -> None:
                self.event = dev.record_event(stream.ptr)

            @property
            def done(self) -> bool:
                return dev.query_event(self.event)

            def synchronize(self) -> None:
                dev.synchronize_event(self.event)

        runtime = SimpleNamespace(
            malloc=malloc, free=dev.free, memGetInfo=dev.mem_info,
            getDevice=lambda: 0, setDevice=lambda i: None,
            CUDARuntimeError=FakeRuntimeError, hostAlloc=lambda n, flags: 0, freeHost=lambda p: None,
            memcpyAsync=lambda *args: self.copies.append(args))
        self.cuda = SimpleNamespace(
            runtime=runtime, Event=Event,
            ExternalStream=lambda ptr, device_id=-1: SimpleNamespace(ptr=ptr),
            get_current_stream=lambda: SimpleNamespace(ptr=dev.current_stream()),
            UnownedMemory=lambda ptr, size, owner, device_id=-1: SimpleNamespace(
                ptr=ptr, size=size, owner=owner),
            MemoryPointer=lambda mem, offset: SimpleNamespace(mem=mem, ptr=mem.ptr + offset),
            set_allocator=self._set_allocator, MemoryPool=lambda: SimpleNamespace(malloc="cupy-default"))

    def _set_allocator(self, allocator: Any) -> None:
        self.allocator = allocator


def test_memory_api_reads_the_device_allocator(sim: Any) -> None:
    dev, alloc = sim
    p = alloc.malloc(1000)
    q = alloc.malloc(3 * MiB)
    assert memory.memory_allocated() == 1024 + 3 * MiB
    assert memory.memory_allocated("cuda:0") == memory.memory_allocated(0)
    assert memory.memory_reserved() == 22 * MiB
    alloc.free(q)
    assert memory.max_memory_allocated() == 1024 + 3 * MiB
    memory.reset_peak_memory_stats()
    assert memory.max_memory_allocated() == 1024
    assert memory.max_memory_reserved() == 22 * MiB
    stats = memory.memory_stats()
    assert stats["num_alloc_retries"] == 0 and stats["num_ooms"] == 0
    assert {"active_bytes.all.peak", "inactive_split_bytes.all.current", "segment.all.current"} <= set(stats)
    memory.empty_cache()
    assert memory.memory_reserved() == 2 * MiB
    [seg] = memory.memory_snapshot()
    assert seg["blocks"][0]["address"] == p
    summary = memory.memory_summary()
    assert "Allocated memory" in summary and "1.00 KiB" in summary and "num_ooms" in summary


def test_cupy_raw_backend_maps_oom_and_events() -> None:
    dev = SimulatedDevice(4 * MiB)
    raw = cupy_pool.CupyRawMemory(0, cupy=FakeCupy(dev))
    alloc = CachingAllocator(raw)
    p = alloc.malloc(100)
    with pytest.raises(memory_oom()):
        alloc.malloc(8 * MiB)
    s1 = dev.new_stream()
    alloc.record_stream(p, s1)
    alloc.free(p)
    assert alloc.malloc(100) != p
    dev.complete_stream(s1)
    assert alloc.malloc(100) == p
    assert raw.mem_info() == dev.mem_info()
    alloc.check_invariants()


def memory_oom() -> type:
    from runtime.cuda.allocator import OutOfMemoryError

    return OutOfMemoryError


def test_cupy_hook_routes_allocations_into_the_pool(sim: Any) -> None:
    dev, alloc = sim
    fake = FakeCupy(dev)
    hook = cupy_pool.install(memory.get_allocator, cupy=fake)
    assert fake.allocator is hook
    ptr = hook(5000)
    assert memory.memory_allocated() == 5120
    assert ptr.mem.owner.ptr == ptr.ptr
    del ptr
    gc.collect()
    assert memory.memory_allocated() == 0
    cupy_pool.uninstall(cupy=fake)
    assert fake.allocator == "cupy-default"


def test_cuda_malloc_frees_with_its_owner(sim: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    dev, alloc = sim
    monkeypatch.setattr(cupy_pool, "import_cupy", lambda: FakeCupy(dev))
    mp = memory.cuda_malloc(100)
    assert memory.memory_allocated() == 512
    del mp
    assert memory.memory_allocated() == 0


def test_finaliser_free_while_locked_is_deferred() -> None:
    dev = SimulatedDevice(1 << 30)
    alloc = CachingAllocator(dev)
    owner = cupy_pool.PoolAllocation(alloc, alloc.malloc(100))
    with alloc._lock:  # as if GC ran the finaliser inside malloc
        del owner
    assert alloc.stats()["allocation.all.current"] == 1
    alloc.malloc(100)  # drains the deferred free first, then reuses the block
    assert alloc.stats()["allocation.all.current"] == 1
    alloc.check_invariants()


def test_host_allocator_caches_by_power_of_two() -> None:
    assert [host_block_size(n) for n in (0, 1, 512, 513, 4096, 5000)] == [512, 512, 512, 1024, 4096, 8192]
    raw = SimulatedHostMemory(1 << 20)
    h = CachingHostAllocator(raw)
    p = h.malloc(3000)
    h.free(p)
    assert h.malloc(4000) == p and len(raw.live) == 1
    q = h.malloc(100)
    assert q != p
    assert h.stats()["allocated_bytes.current"] == 4096 + 512
    h.free(q)
    h.empty_cache()
    assert list(raw.live) == [p]
    h.check_invariants()


def test_host_block_reused_only_after_its_events() -> None:
    dev = SimulatedDevice(0)
    raw = SimulatedHostMemory(1 << 20, dev)
    h = CachingHostAllocator(raw)
    s1 = dev.new_stream()
    p = h.malloc(1000)
    h.record_stream(p + 10, s1)  # any address inside the block
    h.free(p)
    assert h.malloc(1000) != p
    dev.complete_stream(s1)
    assert h.malloc(1000) == p
    h.check_invariants()


def test_host_oom_frees_cache_then_raises() -> None:
    raw = SimulatedHostMemory(2048)
    h = CachingHostAllocator(raw)
    h.free(h.malloc(1024))
    h.malloc(2048)  # frees the cached 1 KiB block and retries
    with pytest.raises(MemoryError, match="pinned"):
        h.malloc(512)


def test_pin_memory_and_async_copy() -> None:
    dev = SimulatedDevice(1 << 30)
    h = CachingHostAllocator(SimulatedHostMemory(1 << 20, dev))
    src = np.arange(12, dtype=np.float32).reshape(3, 4)
    pinned = pin_memory(src, h)
    np.testing.assert_array_equal(pinned, src)
    assert h.is_pinned(pinned.ctypes.data)
    fake = FakeCupy(dev)
    s1 = dev.new_stream()
    copy_host_to_device_async(0xABC, pinned, stream=s1, allocator=h, cupy=fake)
    assert fake.copies == [(0xABC, pinned.ctypes.data, 48, 1, s1)]
    ptr = pinned.ctypes.data
    del pinned
    gc.collect()
    assert h.malloc(48) != ptr  # the copy on s1 may still be reading it
    dev.complete_stream(s1)
    assert h.malloc(48) == ptr
    with pytest.raises(ValueError, match="pinned"):
        copy_host_to_device_async(0xABC, src, allocator=h, cupy=fake)
    empty = pinned_empty((0,), np.float64, h)
    assert empty.shape == (0,)
    host_allocator.set_host_allocator_for_testing(h)
    assert host_allocator.get_host_allocator() is h
    host_allocator.set_host_allocator_for_testing(None)


def _have_gpu() -> bool:
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


@pytest.mark.cuda
@pytest.mark.skipif(not (_have_gpu() or emulator.active()), reason="needs CuPy and a CUDA device")
def test_real_device_pool_roundtrip() -> None:
    cupy = require_cupy()  # CuPy, or the emulated device's module (runtime/cuda/emulator/xp.py)

    alloc = CachingAllocator(memory._raw_memory(0))
    memory.set_allocator_for_testing(0, alloc)
    try:
        cupy_pool.install(memory.get_allocator)
        x = cupy.arange(1000, dtype=cupy.float32)
        assert alloc.stats()["allocated_bytes.all.current"] >= 4000
        assert float(x.sum()) == 499500.0
        del x
        alloc.check_invariants()
    finally:
        cupy_pool.uninstall()
        memory.set_allocator_for_testing(0, None)


def test_first_cuda_use_routes_cupy_allocations_into_the_pool() -> None:
    cupy = pytest.importorskip("cupy", reason="CuPy is installed by the cuda12 extra in CI")
    from runtime.cuda.device import require_cupy

    require_cupy()
    hook = cupy.cuda.get_allocator()
    assert getattr(hook, "__qualname__", "").endswith("install.<locals>.allocate")
