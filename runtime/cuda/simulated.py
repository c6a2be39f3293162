"""A simulated CUDA device: the raw-memory interface of the caching allocator, for tests without a GPU."""

from __future__ import annotations

import threading

from runtime.cuda.allocator import RawOutOfMemory


class SimulatedDevice:
    """A fake device for tests: capacity, an address space, injectable failures, streams and events.

    Streams are ints (``0`` is the default stream); an event recorded on a stream completes only when the test
    says so (``complete(event)`` / ``complete_stream(stream)``), or when the allocator waits for it.
    """

    BASE_ADDRESS = 0x7F00_0000_0000
    ALIGNMENT = 512

    def __init__(self, capacity: int, device_index: int = 0) -> None:
        self.capacity = capacity
        self.device_index = device_index
        self.used = 0
        self.live: dict[int, int] = {}  # addr -> size of every raw allocation not yet freed
        self.num_mallocs = 0
        self.num_frees = 0
        self._next_addr = self.BASE_ADDRESS
        self._fail = 0
        self._streams = 1
        self._current = 0
        self._events: dict[int, tuple[int, bool]] = {}  # event -> (stream, completed)
        self._lock = threading.Lock()

    # raw memory
    def malloc(self, nbytes: int) -> int:
        with self._lock:
            if self._fail > 0:
                self._fail -= 1
                raise RawOutOfMemory(f"injected failure allocating {nbytes} bytes")
            if self.used + nbytes > self.capacity:
                raise RawOutOfMemory(f"{nbytes} bytes requested, {self.capacity - self.used} free")
            addr = self._place(nbytes)
            self.live[addr] = nbytes
            self.used += nbytes
            self.num_mallocs += 1
            return addr

    def _place(self, nbytes: int) -> int:
        """The address of a new block (called with the lock held): here a fake one, addresses only grow."""
        addr = self._next_addr
        self._next_addr += (nbytes + self.ALIGNMENT - 1) // self.ALIGNMENT * self.ALIGNMENT
        return addr

    def free(self, ptr: int) -> None:
        with self._lock:
            size = self.live.pop(ptr, None)
            if size is None:
                raise ValueError(f"SimulatedDevice: free of unknown address {ptr:#x}")
            self.used -= size
            self.num_frees += 1

    def mem_info(self) -> tuple[int, int]:
        return self.capacity - self.used, self.capacity

    def fail_next(self, n: int = 1) -> None:
        """Make the next ``n`` raw allocations fail with out-of-memory."""
        self._fail = n

    # streams and events
    def default_stream(self) -> int:
        return 0

    def current_stream(self) -> int:
        return self._current

    def set_current_stream(self, stream: int) -> None:
        self._current = stream

    def new_stream(self) -> int:
        with self._lock:
            self._streams += 1
            return self._streams - 1

    def record_event(self, stream: int) -> int:
        with self._lock:
            event = len(self._events)
            self._events[event] = (stream, False)
            return event

    def query_event(self, event: int) -> bool:
        return self._events[event][1]

    def synchronize_event(self, event: int) -> None:
        self.complete(event)

    def complete(self, event: int) -> None:
        """Mark one event as complete."""
        with self._lock:
            self._events[event] = (self._events[event][0], True)

    def complete_stream(self, stream: int) -> None:
        """Complete every event recorded so far on ``stream``."""
        with self._lock:
            for event, (s, _) in self._events.items():
                if s == stream:
                    self._events[event] = (s, True)
