"""Devices, streams and events over CuPy, and the one place that decides whether CUDA is usable."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import runtime.cuda.compile as compile_
import runtime.cuda.cupy_pool as cupy_pool
import runtime.cuda.emulator as emulator
import runtime.cuda.memory as memory

if emulator.active():  # kernels load through the host engine (Note [The emulator reaches the caching allocator ...])
    import runtime.cuda.emulator.engine as engine

    compile_.host_loader = engine.load_function

CUDA_INSTALL_HINT = "CUDA support needs CuPy: pip install 'opgen[cuda12]' (or 'opgen[cuda13]')"


class CudaUnavailableError(RuntimeError):
    """CUDA was asked for where CuPy or a device is missing."""


def require_cupy() -> Any:
    """The `cupy` module, or CudaUnavailableError saying what to install.

    Under `OPGEN_EMULATE_CUDA=1` it is the emulated device's CuPy-shaped module (runtime/cuda/emulator/xp.py).
    On first use, CuPy's own allocations (temporaries, cuBLAS workspaces) are routed into opgen's caching
    allocator, so one pool serves all CUDA memory (runtime/cuda/cupy_pool.py).
    """
    if emulator.active():
        from runtime.cuda.emulator import xp as cupy
    else:
        try:
            import cupy
        except ImportError as e:
            raise CudaUnavailableError(CUDA_INSTALL_HINT) from e
    _route_cupy_allocations(cupy)
    return cupy


@functools.cache
def _route_cupy_allocations(cupy: Any) -> None:
    cupy_pool.install(memory.get_allocator, cupy=cupy)


_why_unavailable: list[str] = []  # what _device_count found wrong, for the error message


@functools.cache
def _device_count() -> int:
    if emulator.active():
        return 1
    try:
        import cupy
    except ImportError:
        _why_unavailable.append(CUDA_INSTALL_HINT)
        return 0
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as e:  # no driver, or no device: both mean "no CUDA"
        _why_unavailable.append(f"CuPy is installed, but CUDA cannot start here ({type(e).__name__}: {e}); "
                                "this needs an NVIDIA GPU and its driver")
        return 0
    if count == 0:
        _why_unavailable.append("CuPy is installed, but the driver reports no CUDA device")
    return count


def unavailable_reason() -> str:
    """Why CUDA is not available ('' when it is), and what to do about it."""
    if _device_count() > 0:
        return ""
    return (f"no CUDA device is available: {_why_unavailable[0]}. Without a GPU, OPGEN_EMULATE_CUDA=1 runs "
            "opgen's CUDA kernels on an emulated device")


def is_available() -> bool:
    """True when CuPy is installed and a CUDA device is present. Never raises."""
    return _device_count() > 0


def is_emulated() -> bool:
    """True when CUDA is the emulated device (`OPGEN_EMULATE_CUDA=1`), False on a real GPU or with none."""
    return emulator.active()


def device_count() -> int:
    return _device_count()


def require_device() -> Any:
    """The `cupy` module once a CUDA device is known to be usable, else CudaUnavailableError saying why."""
    cupy = require_cupy()
    if _device_count() == 0:
        raise CudaUnavailableError(unavailable_reason())
    return cupy


def current_device() -> int:
    return int(require_device().cuda.runtime.getDevice())


def set_device(index: int) -> None:
    require_device().cuda.Device(index).use()


def synchronize(device: int | None = None) -> None:
    """Wait for every kernel on `device` (default: the current one)."""
    cupy = require_device()
    with cupy.cuda.Device(current_device() if device is None else device):
        cupy.cuda.runtime.deviceSynchronize()


@functools.cache
def get_device_properties(index: int = 0) -> dict[str, Any]:
    """cudaGetDeviceProperties as a dict (cached: launch sizes read the SM count on every launch)."""
    return dict(require_device().cuda.runtime.getDeviceProperties(index))


def get_device_name(index: int = 0) -> str:
    name = get_device_properties(index)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


@functools.cache
def sm_count(index: int) -> int:
    return int(get_device_properties(index)["multiProcessorCount"])


class Stream:
    """A CUDA stream (wraps `cupy.cuda.Stream`); `with s:` makes it current, as torch.cuda.Stream."""

    def __init__(self, device: int | None = None, priority: int = 0, *, _cupy_stream: Any = None) -> None:
        cupy = require_device()
        if _cupy_stream is not None:
            self._stream = _cupy_stream
            self.device = current_device() if device is None else device
            return
        self.device = current_device() if device is None else device
        with cupy.cuda.Device(self.device):
            self._stream = cupy.cuda.Stream(non_blocking=True, priority=priority)

    @property
    def cuda_stream(self) -> int:
        """The raw cudaStream_t as an int (0 is the legacy default stream)."""
        return int(self._stream.ptr)

    def synchronize(self) -> None:
        self._stream.synchronize()

    def query(self) -> bool:
        return bool(self._stream.done)

    def wait_event(self, event: Event) -> None:
        self._stream.wait_event(event._event)

    def wait_stream(self, other: Stream) -> None:
        self.wait_event(other.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        event = event or Event()
        event.record(self)
        return event

    def __enter__(self) -> Stream:
        self._stream.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stream.__exit__(*exc)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.cuda_stream == self.cuda_stream

    def __hash__(self) -> int:
        return hash(self.cuda_stream)

    def __repr__(self) -> str:
        return f"<opgen.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A CUDA event (wraps `cupy.cuda.Event`)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False) -> None:
        cupy = require_device()
        self._event = cupy.cuda.Event(block=blocking, disable_timing=not enable_timing)

    def record(self, stream: Stream | None = None) -> None:
        self._event.record((stream or current_stream())._stream)

    def synchronize(self) -> None:
        self._event.synchronize()

    def query(self) -> bool:
        return bool(self._event.done)

    def wait(self, stream: Stream | None = None) -> None:
        (stream or current_stream()).wait_event(self)

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds between this event and `end` (both recorded, timing enabled)."""
        cupy = require_device()
        return float(cupy.cuda.get_elapsed_time(self._event, end._event))


def current_stream(device: int | None = None) -> Stream:
    cupy = require_device()
    with cupy.cuda.Device(current_device() if device is None else device):
        return Stream(device, _cupy_stream=cupy.cuda.get_current_stream())


@contextmanager
def stream(s: Stream | None) -> Iterator[Stream | None]:
    """`with G.cuda.stream(s):` runs kernels on `s` (None: no change)."""
    if s is None:
        yield None
        return
    with s:
        yield s
