"""The CUDA caching allocator: block logic over a tiny raw-memory interface.

Modelled on PyTorch's THC/CUDA caching allocator (see Note [Caching allocator rules]); the shape of the
code follows CuPy's memory pool: blocks that split and merge, best fit through one sorted container per pool,
and an injectable raw allocator so tests can assert exact layouts against :class:`SimulatedDevice`.

Note [Caching allocator rules]
------------------------------
* Every request is rounded up to a multiple of 512 bytes (``MIN_BLOCK_SIZE``).
* Requests of at most 1 MiB (``SMALL_SIZE``) are served from the *small* pool, whose segments are 2 MiB
  (``SMALL_BUFFER``). Larger requests use the *large* pool: segments of 20 MiB (``LARGE_BUFFER``) for requests
  under 10 MiB (``MIN_LARGE_ALLOC``), otherwise the request rounded up to 2 MiB (``ROUND_LARGE``).
* A pool's free set is one sorted list of ``(stream, size, address)`` keys; best fit is ``bisect`` on
  ``(stream, size, 0)``, and only a block of the request's own stream may serve it.
* A block is split when the remainder is worth keeping: ``>= 512`` bytes in the small pool, ``> 1 MiB`` in the
  large pool, and never when the block is at least ``max_split_size`` bytes. With ``max_split_size`` set, a
  request under it is never served by such an oversize block, and a request at or above it only by an oversize
  block less than ``LARGE_BUFFER`` bytes bigger (as in PyTorch).
* On free a block merges with its free neighbours inside its segment (segments never merge with each other).
* A block used on other streams (``record_stream``) is only returned to the free set when an event recorded on
  each of those streams at ``free`` time has completed (checked at the start of every ``malloc``).
* When the raw allocator reports out-of-memory, all outstanding events are waited for, every cached unsplit
  segment is returned to the device, and the raw allocation is retried once; if it fails again
  :class:`OutOfMemoryError` is raised.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, insort
from collections.abc import Hashable
from typing import Any, Protocol

MIN_BLOCK_SIZE = 512  # every block size is a multiple of this
SMALL_SIZE = 1 << 20  # largest request served by the small pool
SMALL_BUFFER = 2 << 20  # size of a small-pool segment
LARGE_BUFFER = 20 << 20  # large-pool segment for requests under MIN_LARGE_ALLOC
MIN_LARGE_ALLOC = 10 << 20
ROUND_LARGE = 2 << 20  # large segments at or above MIN_LARGE_ALLOC are rounded to this

Stream = Hashable  # an ordered, hashable stream id (an int on both backends)


class RawOutOfMemory(Exception):
    """Raised by a raw allocator's ``malloc`` when the device has no room (cudaErrorMemoryAllocation)."""


class OutOfMemoryError(RuntimeError):
    """A request failed even after emptying the cache; re-exported as ``G.cuda.OutOfMemoryError``."""

    def __init__(self, message: str, *, requested: int, capacity: int, allocated: int, reserved: int,
                 free: int, device: int) -> None:
        super().__init__(message)
        self.requested = requested
        self.capacity = capacity
        self.allocated = allocated
        self.reserved = reserved
        self.free = free
        self.device = device


class RawMemory(Protocol):
    """What the caching allocator needs from a device: memory, streams and events."""

    device_index: int

    def malloc(self, nbytes: int) -> int: ...  # raises RawOutOfMemory
    def free(self, ptr: int) -> None: ...
    def mem_info(self) -> tuple[int, int]: ...  # (free bytes, total bytes)
    def current_stream(self) -> Any: ...
    def record_event(self, stream: Any) -> Any: ...
    def query_event(self, event: Any) -> bool: ...
    def synchronize_event(self, event: Any) -> None: ...


def round_size(nbytes: int) -> int:
    """Round a request up to the allocator's 512-byte granularity (a request of 0 bytes gets 512)."""
    if nbytes <= MIN_BLOCK_SIZE:
        return MIN_BLOCK_SIZE
    return (nbytes + MIN_BLOCK_SIZE - 1) & -MIN_BLOCK_SIZE


def allocation_size(size: int) -> int:
    """Size of the segment requested from the device for a (rounded) block of ``size`` bytes."""
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return (size + ROUND_LARGE - 1) & -ROUND_LARGE


def format_size(nbytes: int) -> str:
    """Human-readable size, as PyTorch prints it in its OOM message."""
    if nbytes < 1024:
        return f"{nbytes} bytes"
    if nbytes < 1 << 20:
        return f"{nbytes / 1024:.2f} KiB"
    if nbytes < 1 << 30:
        return f"{nbytes / (1 << 20):.2f} MiB"
    return f"{nbytes / (1 << 30):.2f} GiB"


class Block:
    """A contiguous range of a segment; ``prev``/``next`` link the blocks of one segment in address order."""

    __slots__ = ("addr", "size", "stream", "keys", "in_use", "prev", "next", "stream_uses", "event_count",
                 "requested")

    def __init__(self, addr: int, size: int, stream: Any, keys: list) -> None:
        self.addr = addr
        self.size = size  # multiple of MIN_BLOCK_SIZE; addr + size == next.addr when next is not None
        self.stream = stream  # the stream of the whole segment
        self.keys = keys  # the free list of the pool this block belongs to (small or large)
        self.in_use = False  # True while allocated or waiting for events; False iff in the free set
        self.prev: Block | None = None  # prev.addr + prev.size == addr
        self.next: Block | None = None
        self.stream_uses: set | None = None  # other streams this allocation was used on (record_stream)
        self.event_count = 0  # outstanding events; > 0 only while freed but pending
        self.requested = 0  # bytes asked for by the caller (<= size)

    @property
    def is_split(self) -> bool:
        return self.prev is not None or self.next is not None


class CachingAllocator:
    """A caching device allocator over a :class:`RawMemory` (Note [Caching allocator rules])."""

    def __init__(self, raw: RawMemory, *, max_split_size: int | None = None, trace: bool = False) -> None:
        if max_split_size is not None and max_split_size <= LARGE_BUFFER:
            raise ValueError(f"max_split_size must be more than {LARGE_BUFFER} bytes (20 MiB), "
                             f"got {max_split_size}")
        self._raw = raw
        self._lock = threading.Lock()
        self.max_split_size = max_split_size
        # Free sets: sorted (stream, size, addr) keys; a key is here iff its block is in self._free.
        self._small_keys: list[tuple] = []
        self._large_keys: list[tuple] = []
        self._free: dict[int, Block] = {}  # addr -> block, for every block with in_use False
        self._allocated: dict[int, Block] = {}  # addr -> block handed out by malloc and not yet freed
        self._segments: dict[int, Block] = {}  # segment base addr -> the block at that addr (never replaced)
        self._events: list[tuple[Any, Block]] = []  # (event, block) for blocks freed while used elsewhere
        self._deferred: list[int] = []  # addresses freed by finalisers while the lock was taken
        # Statistics. Invariants (checked by check_invariants): *_bytes / *_count equal sums over the blocks;
        # allocated: blocks in self._allocated; active: allocated + pending; inactive_split: free blocks of
        # split segments; reserved/segment: segments. Each *_peak >= its current value.
        self._alloc_bytes = self._alloc_bytes_peak = self._alloc_bytes_total = 0
        self._alloc_count = self._alloc_count_peak = self._alloc_count_total = 0
        # active = allocated + pending; its peak = max(alloc peak, peak tracked while blocks are pending).
        self._pending_bytes = self._pending_count = 0
        self._active_bytes_peak = self._active_count_peak = 0
        self._split_bytes = self._split_bytes_peak = 0
        self._split_count = self._split_count_peak = 0
        self._reserved_bytes = self._reserved_bytes_peak = self._reserved_bytes_total = 0
        self._seg_count = self._seg_count_peak = self._seg_count_total = 0
        self.num_alloc_retries = 0
        self.num_ooms = 0
        # Tracing: ("malloc", id, size, stream) / ("free", id) records while a trace is on.
        self._trace: list[tuple] | None = [] if trace else None
        self._trace_ids: dict[int, int] = {}
        self._trace_next = 0

    @property
    def raw(self) -> RawMemory:
        return self._raw

    # ------------------------------------------------------------------ malloc / free
    def malloc(self, nbytes: int, stream: Any = None) -> int:
        """Return the device address of at least ``nbytes`` bytes usable on ``stream`` (default: current)."""
        if nbytes < 0:
            raise ValueError(f"cannot allocate a negative number of bytes ({nbytes})")
        if stream is None:
            stream = self._raw.current_stream()
        size = round_size(nbytes)
        with self._lock:
            if self._deferred:
                self._drain_deferred()
            if self._events:
                self._process_events()
            keys = self._small_keys if size <= SMALL_SIZE else self._large_keys
            block = None
            i = bisect_left(keys, (stream, size, 0))
            if i < len(keys):
                key = keys[i]
                if key[0] == stream and (self.max_split_size is None or self._fits_oversize(size, key[1])):
                    del keys[i]
                    block = self._free.pop(key[2])
                    if block.prev is not None or block.next is not None:
                        self._split_bytes -= block.size
                        self._split_count -= 1
            if block is None:
                block = self._new_segment(size, stream, keys)
            remaining = block.size - size
            if (remaining >= MIN_BLOCK_SIZE if keys is self._small_keys else remaining > SMALL_SIZE) and (
                    self.max_split_size is None or block.size < self.max_split_size):
                rest = Block(block.addr + size, remaining, stream, keys)
                rest.prev = block
                nxt = rest.next = block.next
                if nxt is not None:
                    nxt.prev = rest
                block.next = rest
                block.size = size
                insort(keys, (stream, remaining, rest.addr))
                self._free[rest.addr] = rest
                self._split_bytes += remaining
                self._split_count += 1
                if self._split_bytes > self._split_bytes_peak:
                    self._split_bytes_peak = self._split_bytes
                if self._split_count > self._split_count_peak:
                    self._split_count_peak = self._split_count
            block.in_use = True
            block.requested = nbytes
            addr = block.addr
            self._allocated[addr] = block
            size = block.size
            self._alloc_bytes += size
            self._alloc_bytes_total += size
            self._alloc_count += 1
            self._alloc_count_total += 1
            if self._alloc_bytes > self._alloc_bytes_peak:
                self._alloc_bytes_peak = self._alloc_bytes
            if self._alloc_count > self._alloc_count_peak:
                self._alloc_count_peak = self._alloc_count
            if self._pending_count:
                self._update_active_peak()
            if self._trace is not None:
                self._trace_ids[addr] = self._trace_next
                self._trace.append(("malloc", self._trace_next, nbytes, stream))
                self._trace_next += 1
            return addr

    def free(self, ptr: int) -> None:
        """Return an allocation to the cache (after events on the streams it was recorded on complete)."""
        with self._lock:  # the common case of _free_locked, inlined for speed
            block = self._allocated.pop(ptr, None)
            if block is None or block.stream_uses or self._trace is not None:
                if block is not None:
                    self._allocated[ptr] = block
                self._free_locked(ptr)
                return
            self._alloc_bytes -= block.size
            self._alloc_count -= 1
            self._free_block(block)

    def free_from_finalizer(self, ptr: int) -> None:
        """``free`` for finalisers, which may run inside this allocator (GC): defer if the lock is taken."""
        if self._lock.acquire(blocking=False):
            try:
                self._free_locked(ptr)
            finally:
                self._lock.release()
        else:
            self._deferred.append(ptr)  # list.append is atomic; drained by the next malloc or empty_cache

    def record_stream(self, ptr: int, stream: Any) -> None:
        """Mark the allocation at ``ptr`` as used on ``stream``: ``free`` then waits for that stream."""
        with self._lock:
            block = self._allocated.get(ptr)
            if block is None:
                raise ValueError(f"record_stream on address {ptr:#x}, which is not an allocation")
            if stream == block.stream:
                return
            if block.stream_uses is None:
                block.stream_uses = set()
            block.stream_uses.add(stream)

    def empty_cache(self) -> None:
        """Wait for pending events, then return every cached unsplit segment to the device."""
        with self._lock:
            self._release_cached()

    # ------------------------------------------------------------------ internals (lock held)
    def _update_active_peak(self) -> None:
        active = self._alloc_bytes + self._pending_bytes
        if active > self._active_bytes_peak:
            self._active_bytes_peak = active
        count = self._alloc_count + self._pending_count
        if count > self._active_count_peak:
            self._active_count_peak = count

    def _fits_oversize(self, size: int, block_size: int) -> bool:
        limit = self.max_split_size
        if size < limit:
            return block_size < limit
        return block_size < size + LARGE_BUFFER

    def _free_locked(self, ptr: int) -> None:
        block = self._allocated.pop(ptr, None)
        if block is None:
            raise ValueError(f"free of address {ptr:#x}, which this allocator did not allocate "
                             "(or already freed)")
        self._alloc_bytes -= block.size
        self._alloc_count -= 1
        if self._trace is not None:
            self._trace.append(("free", self._trace_ids.pop(ptr)))
        if block.stream_uses:
            for stream in block.stream_uses:
                self._events.append((self._raw.record_event(stream), block))
            block.event_count += len(block.stream_uses)
            block.stream_uses = None
            self._pending_bytes += block.size
            self._pending_count += 1
            self._update_active_peak()
            return
        self._free_block(block)

    def _drain_deferred(self) -> None:
        while self._deferred:
            self._free_locked(self._deferred.pop())

    def _free_block(self, block: Block) -> None:
        """Put a block no longer in use back into the free set, merging with free neighbours."""
        keys = block.keys
        free = self._free
        prev = block.prev
        if prev is not None and not prev.in_use:
            del keys[bisect_left(keys, (prev.stream, prev.size, prev.addr))]
            del free[prev.addr]
            self._split_bytes -= prev.size
            self._split_count -= 1
            prev.size += block.size
            nxt = prev.next = block.next
            if nxt is not None:
                nxt.prev = prev
            block = prev
        nxt = block.next
        if nxt is not None and not nxt.in_use:
            del keys[bisect_left(keys, (nxt.stream, nxt.size, nxt.addr))]
            del free[nxt.addr]
            self._split_bytes -= nxt.size
            self._split_count -= 1
            block.size += nxt.size
            after = block.next = nxt.next
            if after is not None:
                after.prev = block
        block.in_use = False
        insort(keys, (block.stream, block.size, block.addr))
        free[block.addr] = block
        if block.prev is not None or block.next is not None:
            self._split_bytes += block.size
            self._split_count += 1
            if self._split_bytes > self._split_bytes_peak:
                self._split_bytes_peak = self._split_bytes
            if self._split_count > self._split_count_peak:
                self._split_count_peak = self._split_count

    def _process_events(self, wait: bool = False) -> None:
        """Free the pending blocks whose events have all completed (all of them, waiting, if ``wait``)."""
        raw = self._raw
        pending = []
        for event, block in self._events:
            if wait:
                raw.synchronize_event(event)
            elif not raw.query_event(event):
                pending.append((event, block))
                continue
            block.event_count -= 1
            if block.event_count == 0:
                self._pending_bytes -= block.size
                self._pending_count -= 1
                self._free_block(block)
        self._events = pending

    def _new_segment(self, size: int, stream: Any, keys: list) -> Block:
        alloc_size = allocation_size(size)
        try:
            addr = self._raw.malloc(alloc_size)
        except RawOutOfMemory:
            self.num_alloc_retries += 1
            self._release_cached()
            try:
                addr = self._raw.malloc(alloc_size)
            except RawOutOfMemory:
                self.num_ooms += 1
                raise self._oom_error(size, alloc_size) from None
        block = Block(addr, alloc_size, stream, keys)
        self._segments[addr] = block
        self._reserved_bytes += alloc_size
        self._reserved_bytes_total += alloc_size
        self._seg_count += 1
        self._seg_count_total += 1
        if self._reserved_bytes > self._reserved_bytes_peak:
            self._reserved_bytes_peak = self._reserved_bytes
        if self._seg_count > self._seg_count_peak:
            self._seg_count_peak = self._seg_count
        return block

    def _release_cached(self) -> None:
        self._drain_deferred()
        if self._events:
            self._process_events(wait=True)
        for addr, block in list(self._free.items()):
            if block.prev is None and block.next is None:
                keys = block.keys
                del keys[bisect_left(keys, (block.stream, block.size, addr))]
                del self._free[addr]
                del self._segments[addr]
                self._raw.free(addr)
                self._reserved_bytes -= block.size
                self._seg_count -= 1

    def _oom_error(self, size: int, alloc_size: int) -> OutOfMemoryError:
        free, total = self._raw.mem_info()
        device = getattr(self._raw, "device_index", 0)
        allocated = self._alloc_bytes
        reserved = self._reserved_bytes
        message = (
            f"CUDA out of memory. Tried to allocate {format_size(size)} (a new segment of "
            f"{format_size(alloc_size)}). GPU {device} has a total capacity of {format_size(total)} of which "
            f"{format_size(free)} is free. Of the allocated memory {format_size(allocated)} is allocated by "
            f"opgen, and {format_size(reserved - allocated)} is reserved by opgen but unallocated. "
            "If reserved but unallocated memory is large try setting max_split_size to avoid fragmentation."
        )
        return OutOfMemoryError(message, requested=size, capacity=total, allocated=allocated,
                                reserved=reserved, free=free, device=device)

    # ------------------------------------------------------------------ introspection
    def stats(self) -> dict[str, int]:
        """PyTorch-style flat statistics: ``allocated_bytes.all.current`` ... ``num_ooms``."""
        with self._lock:
            groups = {
                "allocation": (self._alloc_count, self._alloc_count_peak, self._alloc_count_total),
                "segment": (self._seg_count, self._seg_count_peak, self._seg_count_total),
                "active": (self._alloc_count + self._pending_count,
                           max(self._active_count_peak, self._alloc_count_peak), self._alloc_count_total),
                "allocated_bytes": (self._alloc_bytes, self._alloc_bytes_peak, self._alloc_bytes_total),
                "reserved_bytes": (self._reserved_bytes, self._reserved_bytes_peak,
                                   self._reserved_bytes_total),
                "active_bytes": (self._alloc_bytes + self._pending_bytes,
                                 max(self._active_bytes_peak, self._alloc_bytes_peak),
                                 self._alloc_bytes_total),
            }
            out: dict[str, int] = {}
            for name, (current, peak, total) in groups.items():
                out[f"{name}.all.current"] = current
                out[f"{name}.all.peak"] = peak
                out[f"{name}.all.allocated"] = total
                out[f"{name}.all.freed"] = total - current
            out["inactive_split.all.current"] = self._split_count
            out["inactive_split.all.peak"] = self._split_count_peak
            out["inactive_split_bytes.all.current"] = self._split_bytes
            out["inactive_split_bytes.all.peak"] = self._split_bytes_peak
            out["num_alloc_retries"] = self.num_alloc_retries
            out["num_ooms"] = self.num_ooms
            out["num_device_alloc"] = self._seg_count_total
            out["num_device_free"] = self._seg_count_total - self._seg_count
            return dict(sorted(out.items()))

    def reset_peak_stats(self) -> None:
        """Set every peak to its current value."""
        with self._lock:
            self._alloc_bytes_peak = self._alloc_bytes
            self._alloc_count_peak = self._alloc_count
            self._active_bytes_peak = self._alloc_bytes + self._pending_bytes
            self._active_count_peak = self._alloc_count + self._pending_count
            self._split_bytes_peak = self._split_bytes
            self._split_count_peak = self._split_count
            self._reserved_bytes_peak = self._reserved_bytes
            self._seg_count_peak = self._seg_count

    def snapshot(self) -> list[dict[str, Any]]:
        """Every segment, in address order, with its blocks (PyTorch's ``memory_snapshot`` layout)."""
        with self._lock:
            pending = {id(block) for _, block in self._events}
            segments = []
            for base in sorted(self._segments):
                head = self._segments[base]
                blocks = []
                total = allocated = active = requested = 0
                block: Block | None = head
                while block is not None:
                    if not block.in_use:
                        state = "inactive"
                    elif id(block) in pending:
                        state = "active_pending_free"
                        active += block.size
                    else:
                        state = "active_allocated"
                        allocated += block.size
                        active += block.size
                        requested += block.requested
                    blocks.append({"address": block.addr, "size": block.size,
                                   "requested_size": block.requested if state == "active_allocated" else 0,
                                   "state": state})
                    total += block.size
                    block = block.next
                segments.append({
                    "device": getattr(self._raw, "device_index", 0), "address": base, "total_size": total,
                    "allocated_size": allocated, "active_size": active, "requested_size": requested,
                    "stream": head.stream,
                    "segment_type": "small" if head.keys is self._small_keys else "large",
                    "blocks": blocks,
                })
            return segments

    # ------------------------------------------------------------------ tracing
    def start_trace(self) -> None:
        """Start recording ``("malloc", id, size, stream)`` and ``("free", id)`` events."""
        with self._lock:
            self._trace = []
            self._trace_ids = {}
            self._trace_next = 0

    def stop_trace(self) -> list[tuple]:
        """Stop recording and return the events recorded since ``start_trace``."""
        with self._lock:
            trace, self._trace = self._trace or [], None
            self._trace_ids = {}
            return trace

    # ------------------------------------------------------------------ invariants
    def check_invariants(self) -> None:
        """Raise AssertionError unless blocks tile their segments, free sets match and stats equal sums."""
        with self._lock:
            _check(self)


def _check(a: CachingAllocator) -> None:
    def fail(message: str) -> None:
        raise AssertionError(message)

    counts = {"alloc": [0, 0], "active": [0, 0], "split": [0, 0], "reserved": [0, 0]}
    pending_events: dict[int, int] = {}
    for _, block in a._events:
        pending_events[id(block)] = pending_events.get(id(block), 0) + 1
    seen_free: set[int] = set()
    end_prev = -1
    for base in sorted(a._segments):
        head = a._segments[base]
        if head.addr != base or head.prev is not None:
            fail(f"segment {base:#x}: head block is {head.addr:#x}")
        if base < end_prev:
            fail(f"segment {base:#x} overlaps the previous segment")
        addr, block, seg_size = base, head, 0
        while block is not None:
            if block.addr != addr or block.size <= 0 or block.size % MIN_BLOCK_SIZE:
                fail(f"block {block.addr:#x}+{block.size} does not tile segment {base:#x} at {addr:#x}")
            if block.stream != head.stream or block.keys is not head.keys:
                fail(f"block {block.addr:#x} has a different stream or pool than its segment")
            if block.next is not None and block.next.prev is not block:
                fail(f"block {block.addr:#x}: next.prev link broken")
            if block.in_use:
                nevents = pending_events.get(id(block), 0)
                if nevents != block.event_count:
                    fail(f"block {block.addr:#x}: event_count {block.event_count} but {nevents} events")
                if nevents == 0 and a._allocated.get(block.addr) is not block:
                    fail(f"block {block.addr:#x} in use but neither allocated nor pending")
                if nevents and block.addr in a._allocated:
                    fail(f"block {block.addr:#x} both allocated and pending")
                if nevents == 0:
                    counts["alloc"][0] += block.size
                    counts["alloc"][1] += 1
                counts["active"][0] += block.size
                counts["active"][1] += 1
            else:
                if a._free.get(block.addr) is not block:
                    fail(f"free block {block.addr:#x} missing from the free set")
                for neighbour in (block.prev, block.next):
                    if neighbour is not None and not neighbour.in_use:
                        fail(f"free block {block.addr:#x} has an unmerged free neighbour")
                seen_free.add(block.addr)
                if block.is_split:
                    counts["split"][0] += block.size
                    counts["split"][1] += 1
            seg_size += block.size
            addr += block.size
            block = block.next
        end_prev = base + seg_size
        counts["reserved"][0] += seg_size
        counts["reserved"][1] += 1
        if seg_size != (allocation_size(seg_size) if head.keys is a._large_keys else SMALL_BUFFER):
            fail(f"segment {base:#x} has size {seg_size}, not a segment size")
    if seen_free != set(a._free):
        fail(f"free set has blocks that are not in any segment: {sorted(set(a._free) - seen_free)}")
    for keys in (a._small_keys, a._large_keys):
        if keys != sorted(keys):
            fail("free keys are not sorted")
    keys_all = {(b.stream, b.size, b.addr) for b in a._free.values()}
    if keys_all != set(a._small_keys) | set(a._large_keys) or len(keys_all) != len(a._small_keys) + len(
            a._large_keys):
        fail("free keys do not equal the free blocks")
    if len(a._allocated) != counts["alloc"][1]:
        fail("allocated map has blocks that are not in any segment")
    expected = {
        "alloc": (a._alloc_bytes, a._alloc_count),
        "active": (a._alloc_bytes + a._pending_bytes, a._alloc_count + a._pending_count),
        "split": (a._split_bytes, a._split_count), "reserved": (a._reserved_bytes, a._seg_count),
    }
    for name, (nbytes, count) in expected.items():
        if [nbytes, count] != counts[name]:
            fail(f"{name} stats are {nbytes} bytes / {count} but the blocks sum to {counts[name]}")
    active_peak = max(a._active_bytes_peak, a._alloc_bytes_peak)
    peaks = [(a._alloc_bytes, a._alloc_bytes_peak), (a._alloc_bytes + a._pending_bytes, active_peak),
             (a._split_bytes, a._split_bytes_peak), (a._reserved_bytes, a._reserved_bytes_peak)]
    if any(cur > peak for cur, peak in peaks):
        fail("a peak is below its current value")

__all__ = ["CachingAllocator", "OutOfMemoryError", "RawMemory", "RawOutOfMemory", "allocation_size",
           "format_size", "round_size"]
