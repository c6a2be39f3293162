"""The caching allocator's rules, checked as exact block layouts on a SimulatedDevice."""

from __future__ import annotations

import pytest

from runtime.cuda.allocator import (
    LARGE_BUFFER,
    SMALL_BUFFER,
    CachingAllocator,
    OutOfMemoryError,
    allocation_size,
    format_size,
    round_size,
)
from runtime.cuda.simulated import SimulatedDevice

MiB = 1 << 20
BASE = SimulatedDevice.BASE_ADDRESS


def make(capacity: int = 1 << 30, **kwargs) -> tuple[SimulatedDevice, CachingAllocator]:
    dev = SimulatedDevice(capacity)
    return dev, CachingAllocator(dev, **kwargs)


def layout(alloc: CachingAllocator) -> list[list[tuple[int, int, str]]]:
    """Each segment as [(offset from segment base, size, state)]."""
    return [[(b["address"] - s["address"], b["size"], b["state"]) for b in s["blocks"]]
            for s in alloc.snapshot()]


def free_keys(alloc: CachingAllocator) -> list[tuple]:
    return sorted(alloc._small_keys + alloc._large_keys)


@pytest.mark.parametrize("nbytes, expected", [(0, 512), (1, 512), (512, 512), (513, 1024), (4096, 4096),
                                              (MiB + 1, MiB + 512)])
def test_round_size(nbytes: int, expected: int) -> None:
    assert round_size(nbytes) == expected
    dev, a = make()
    a.malloc(nbytes)
    assert a.stats()["allocated_bytes.all.current"] == expected


@pytest.mark.parametrize("size, segment", [
    (512, SMALL_BUFFER), (MiB, SMALL_BUFFER), (MiB + 512, LARGE_BUFFER), (10 * MiB - 512, LARGE_BUFFER),
    (10 * MiB, 10 * MiB), (11 * MiB + 512, 12 * MiB), (64 * MiB, 64 * MiB)])
def test_segment_sizes(size: int, segment: int) -> None:
    assert allocation_size(size) == segment
    dev, a = make()
    a.malloc(size)
    assert list(dev.live.values()) == [segment]
    [seg] = a.snapshot()
    assert seg["total_size"] == segment
    assert seg["segment_type"] == ("small" if size <= MiB else "large")


def test_exact_layout_split_and_merge() -> None:
    dev, a = make()
    p1 = a.malloc(1000)
    p2 = a.malloc(3000)
    p3 = a.malloc(512)
    assert (p1, p2, p3) == (BASE, BASE + 1024, BASE + 4096)
    assert layout(a) == [[(0, 1024, "active_allocated"), (1024, 3072, "active_allocated"),
                          (4096, 512, "active_allocated"), (4608, SMALL_BUFFER - 4608, "inactive")]]
    a.free(p2)
    assert layout(a)[0][1] == (1024, 3072, "inactive")
    assert free_keys(a) == [(0, 3072, BASE + 1024), (0, SMALL_BUFFER - 4608, BASE + 4608)]
    a.free(p1)  # merges with the free block after it
    assert layout(a)[0][:2] == [(0, 4096, "inactive"), (4096, 512, "active_allocated")]
    a.free(p3)  # merges with both neighbours: the segment is whole again
    assert layout(a) == [[(0, SMALL_BUFFER, "inactive")]]
    assert free_keys(a) == [(0, SMALL_BUFFER, BASE)]
    a.check_invariants()


def test_best_fit_prefers_smallest_then_lowest_address() -> None:
    dev, a = make()
    ptrs = [a.malloc(n) for n in (4096, 512, 2048, 512, 2048, 512, 8192, 512)]
    for i in (0, 2, 4, 6):  # holes of 4096, 2048, 2048, 8192 separated by live blocks
        a.free(ptrs[i])
    assert a.malloc(1500) == ptrs[2]  # the 2048 holes tie on size: the lower address wins
    assert a.malloc(2048) == ptrs[4]
    assert a.malloc(3000) == ptrs[0]
    assert a.malloc(5000) == ptrs[6]
    a.check_invariants()


def test_small_and_large_pools_are_separate() -> None:
    dev, a = make()
    big = a.malloc(4 * MiB)
    a.free(big)  # a free 20 MiB large segment
    small = a.malloc(1024)  # must not be carved from the large pool
    assert dev.num_mallocs == 2 and not (big <= small < big + LARGE_BUFFER)


def test_request_served_only_by_its_own_stream() -> None:
    dev, a = make()
    s1 = dev.new_stream()
    p = a.malloc(1000, stream=s1)
    a.free(p)
    q = a.malloc(1000, stream=0)
    assert dev.num_mallocs == 2 and q != p
    assert a.malloc(1000, stream=s1) == p
    assert sorted(s["stream"] for s in a.snapshot()) == [0, s1]
    a.check_invariants()


def test_default_stream_is_the_current_stream() -> None:
    dev, a = make()
    s1 = dev.new_stream()
    dev.set_current_stream(s1)
    a.malloc(100)
    assert a.snapshot()[0]["stream"] == s1


def test_small_split_threshold() -> None:
    dev, a = make()
    a.malloc(MiB)
    a.malloc(MiB - 512)  # remainder of 512 bytes: still split off
    assert layout(a) == [[(0, MiB, "active_allocated"), (MiB, MiB - 512, "active_allocated"),
                          (2 * MiB - 512, 512, "inactive")]]
    a.malloc(512)  # exactly fills the segment
    assert layout(a)[0][-1] == (2 * MiB - 512, 512, "active_allocated")
    a.check_invariants()


def test_large_split_threshold() -> None:
    dev, a = make()
    a.malloc(LARGE_BUFFER - MiB)  # remainder exactly 1 MiB: not worth keeping, the block takes it all
    assert layout(a) == [[(0, LARGE_BUFFER, "active_allocated")]]
    assert a.stats()["allocated_bytes.all.current"] == LARGE_BUFFER
    dev, a = make()
    a.malloc(LARGE_BUFFER - MiB - 512)  # remainder 1 MiB + 512: split
    assert layout(a) == [[(0, LARGE_BUFFER - MiB - 512, "active_allocated"),
                          (LARGE_BUFFER - MiB - 512, MiB + 512, "inactive")]]
    a.check_invariants()


def test_large_cached_block_is_split_for_a_smaller_request() -> None:
    dev, a = make()
    p = a.malloc(64 * MiB)
    a.free(p)
    q = a.malloc(2 * MiB)
    assert q == p and dev.num_mallocs == 1
    assert layout(a) == [[(0, 2 * MiB, "active_allocated"), (2 * MiB, 62 * MiB, "inactive")]]
    stats = a.stats()
    assert stats["inactive_split_bytes.all.current"] == 62 * MiB
    assert stats["inactive_split.all.current"] == 1


def test_max_split_size() -> None:
    with pytest.raises(ValueError):
        CachingAllocator(SimulatedDevice(MiB), max_split_size=8 * MiB)
    dev, a = make(max_split_size=32 * MiB)
    p = a.malloc(64 * MiB)
    a.free(p)
    q = a.malloc(2 * MiB)  # an oversize block never serves a request under max_split_size
    assert q != p and dev.num_mallocs == 2
    r = a.malloc(50 * MiB)  # served by the oversize block (64 < 50 + 20), and it is not split
    assert r == p
    assert [s for s in layout(a) if s[0][1] == 64 * MiB] == [[(0, 64 * MiB, "active_allocated")]]
    a.free(r)
    a.malloc(40 * MiB)  # 64 >= 40 + 20: too wasteful, a new segment
    assert dev.num_mallocs == 3
    a.check_invariants()


def test_record_stream_defers_reuse_until_events_complete() -> None:
    dev, a = make()
    s1, s2 = dev.new_stream(), dev.new_stream()
    p = a.malloc(4096)
    a.record_stream(p, s1)
    a.record_stream(p, s2)
    a.record_stream(p, 0)  # its own stream: no event needed
    a.free(p)
    stats = a.stats()
    assert stats["allocated_bytes.all.current"] == 0
    assert stats["active_bytes.all.current"] == 4096 and stats["active.all.current"] == 1
    assert layout(a)[0][0] == (0, 4096, "active_pending_free")
    q = a.malloc(4096)
    assert q != p
    a.free(q)
    dev.complete_stream(s1)
    assert a.malloc(4096) == q  # p still waits for s2
    dev.complete_stream(s2)
    a.malloc(8)  # processing events returns p to the free set ...
    assert a.stats()["active_bytes.all.current"] == 4096 + 512
    a.check_invariants()


def test_empty_cache_waits_for_events_and_keeps_split_segments() -> None:
    dev, a = make()
    s1 = dev.new_stream()
    keep = a.malloc(1000)
    a.free(a.malloc(MiB + 1))  # a whole free 20 MiB segment
    p = a.malloc(5 * MiB)
    a.free(a.malloc(30 * MiB))
    a.record_stream(p, s1)
    a.free(p)
    a.empty_cache()
    assert list(dev.live.values()) == [SMALL_BUFFER]  # only the segment that holds `keep`
    assert a.stats()["reserved_bytes.all.current"] == SMALL_BUFFER
    a.free(keep)
    a.empty_cache()
    assert dev.used == 0 and a.snapshot() == []
    a.check_invariants()


def test_oom_frees_cache_and_retries_once() -> None:
    dev, a = make(capacity=21 * MiB)
    a.free(a.malloc(100))  # a cached 2 MiB small segment
    p = a.malloc(2 * MiB)  # needs 20 MiB: fails, frees the small segment, retries
    assert dev.live == {p: LARGE_BUFFER}
    stats = a.stats()
    assert stats["num_alloc_retries"] == 1 and stats["num_ooms"] == 0
    assert stats["num_device_free"] == 1
    a.check_invariants()


def test_injected_failure_is_retried() -> None:
    dev, a = make()
    dev.fail_next(1)
    a.malloc(100)
    assert a.stats()["num_alloc_retries"] == 1
    dev.fail_next(2)
    with pytest.raises(OutOfMemoryError):
        a.malloc(2 * MiB)
    assert a.stats()["num_ooms"] == 1 and a.stats()["num_alloc_retries"] == 2


def test_oom_error_message() -> None:
    dev, a = make(capacity=30 * MiB)
    a.malloc(3 * MiB)  # 20 MiB reserved, 3 MiB allocated
    with pytest.raises(OutOfMemoryError) as info:
        a.malloc(18 * MiB)  # the cached 17 MiB block is too small; a new 18 MiB segment does not fit
    err = info.value
    assert isinstance(err, RuntimeError)
    assert (err.requested, err.capacity, err.allocated, err.reserved, err.free) == (
        18 * MiB, 30 * MiB, 3 * MiB, 20 * MiB, 10 * MiB)
    assert str(err) == (
        "CUDA out of memory. Tried to allocate 18.00 MiB (a new segment of 18.00 MiB). GPU 0 has a total "
        "capacity of 30.00 MiB of which 10.00 MiB is free. Of the allocated memory 3.00 MiB is allocated by "
        "opgen, and 17.00 MiB is reserved by opgen but unallocated. If reserved but unallocated memory is "
        "large try setting max_split_size to avoid fragmentation.")
    assert a.stats()["num_ooms"] == 1
    a.check_invariants()


def test_format_size() -> None:
    assert [format_size(n) for n in (0, 1023, 1024, 3 * MiB // 2, 5 << 30)] == [
        "0 bytes", "1023 bytes", "1.00 KiB", "1.50 MiB", "5.00 GiB"]


def test_stats_current_peak_and_reset() -> None:
    dev, a = make()
    p = a.malloc(1000)
    q = a.malloc(3 * MiB)
    a.free(p)
    s = a.stats()
    assert s["allocated_bytes.all.current"] == 3 * MiB
    assert s["allocated_bytes.all.peak"] == 3 * MiB + 1024
    assert s["allocated_bytes.all.allocated"] == 3 * MiB + 1024
    assert s["allocated_bytes.all.freed"] == 1024
    assert s["allocation.all.current"] == 1 and s["allocation.all.peak"] == 2
    assert s["reserved_bytes.all.current"] == SMALL_BUFFER + LARGE_BUFFER
    assert s["segment.all.current"] == 2
    assert s["inactive_split_bytes.all.current"] == LARGE_BUFFER - 3 * MiB
    assert s["num_device_alloc"] == 2
    a.reset_peak_stats()
    s = a.stats()
    assert s["allocated_bytes.all.peak"] == 3 * MiB and s["allocation.all.peak"] == 1
    a.free(q)
    assert a.stats()["inactive_split_bytes.all.peak"] == LARGE_BUFFER - 3 * MiB
    assert a.stats()["inactive_split_bytes.all.current"] == 0


def test_bad_free_and_record_stream() -> None:
    dev, a = make()
    p = a.malloc(10)
    a.free(p)
    with pytest.raises(ValueError, match="did not allocate"):
        a.free(p)
    with pytest.raises(ValueError, match="not an allocation"):
        a.record_stream(p, 1)
    with pytest.raises(ValueError):
        a.malloc(-1)
    with pytest.raises(ValueError, match="unknown address"):
        dev.free(12345)


def test_trace_records_mallocs_and_frees() -> None:
    dev, a = make(trace=True)
    p = a.malloc(100)
    q = a.malloc(200, stream=3)
    a.free(p)
    assert a.stop_trace() == [("malloc", 0, 100, 0), ("malloc", 1, 200, 3), ("free", 0)]
    a.free(q)
    a.start_trace()
    a.free(a.malloc(7))
    assert a.stop_trace() == [("malloc", 0, 7, 0), ("free", 0)]


def test_snapshot_fields() -> None:
    dev, a = make()
    p = a.malloc(1000)
    [seg] = a.snapshot()
    assert seg["device"] == 0 and seg["address"] == p and seg["stream"] == 0
    assert (seg["total_size"], seg["allocated_size"], seg["active_size"], seg["requested_size"]) == (
        SMALL_BUFFER, 1024, 1024, 1000)
    assert seg["blocks"][0] == {"address": p, "size": 1024, "requested_size": 1000,
                                "state": "active_allocated"}
