"""The emulated device's array module: the part of CuPy's API that opgen's CUDA backend uses, over NumPy.

`runtime.cuda.require_cupy()` returns this module under `OPGEN_EMULATE_CUDA=1`, so the launch code of the
GPU path runs unchanged. A device array is a `DeviceArray`, a NumPy array subclass over memory of the
caching allocator (memory.HostBackedDevice): `.data.ptr` is its device address, `.device.id` its device,
`.get()` copies it to a plain (CPU) NumPy array, and `__cuda_array_interface__` / `__dlpack_device__`
describe it as CUDA memory. NumPy operations on device arrays return device arrays (NumPy keeps the
subclass), which is how the composite kernels written against CuPy run here; their temporaries come from
NumPy rather than from the pool. Streams and events exist but work runs at launch: every stream is idle
and every event complete.
"""

from __future__ import annotations

import itertools
import threading
import time
from types import SimpleNamespace
from typing import Any

import numpy as np

import runtime.cuda.emulator as emulator

__version__ = "emulated"

KDL_CUDA = 2
SM_COUNT = 4
DEVICE_NAME = "opgen emulated CUDA device (host CPU)"


class _Pointer:
    __slots__ = ("ptr",)

    def __init__(self, ptr: int) -> None:
        self.ptr = ptr


class UnownedMemory:
    """Memory owned elsewhere (`owner` keeps it alive), as cupy.cuda.UnownedMemory."""

    def __init__(self, ptr: int, size: int, owner: Any, device_id: int = 0) -> None:
        self.ptr, self.size, self.owner, self.device_id = int(ptr), int(size), owner, device_id


class MemoryPointer:
    """A pointer into a memory object, as cupy.cuda.MemoryPointer."""

    def __init__(self, mem: UnownedMemory, offset: int) -> None:
        self.mem, self.ptr, self.device_id = mem, mem.ptr + offset, mem.device_id
        self.size = mem.size - offset


class _Buffer:
    """The bytes behind a MemoryPointer, exposed to NumPy; keeps the pointer (and its pool block) alive."""

    def __init__(self, memptr: MemoryPointer, nbytes: int) -> None:
        self.memptr = memptr
        self.__array_interface__ = {"data": (memptr.ptr, False), "shape": (nbytes,), "typestr": "|u1",
                                    "version": 3}


class _DeviceId:
    __slots__ = ("id",)

    def __init__(self, index: int) -> None:
        self.id = index

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id} (emulated)>"


_DEVICE0 = _DeviceId(0)


class DeviceArray(np.ndarray):
    """A NumPy array over emulated device memory (see the module docstring)."""

    def __new__(cls, shape: Any, dtype: Any = float, memptr: MemoryPointer | None = None,
                strides: Any = None, order: str = "C") -> DeviceArray:
        dtype = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if memptr is None:
            memptr = _allocate(max(nbytes, 1))
        raw = np.asarray(_Buffer(memptr, max(nbytes, 1)))
        return np.ndarray.__new__(cls, shape, dtype, buffer=raw, offset=0, strides=strides, order=order)

    @property
    def data(self) -> _Pointer:  # type: ignore[override]
        return _Pointer(self.__array_interface__["data"][0])

    @property
    def device(self) -> _DeviceId:
        return _DEVICE0

    def get(self, stream: Any = None, out: np.ndarray | None = None) -> np.ndarray:
        """A copy in host memory (a plain NumPy array)."""
        if out is not None:
            out[...] = self.view(np.ndarray)
            return out
        return np.array(self.view(np.ndarray), copy=True)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        contiguous = self.flags.c_contiguous
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.data.ptr, not self.flags.writeable),
                "strides": None if contiguous else self.strides, "version": 3, "stream": None}

    def __dlpack_device__(self) -> tuple[int, int]:
        return KDL_CUDA, 0

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        # Host memory underneath: the capsule NumPy writes (stream order is moot, work ran at launch).
        return self.view(np.ndarray).__dlpack__(**{k: v for k, v in kwargs.items() if v is not None})

    def __repr__(self) -> str:
        return f"{np.array_repr(self.view(np.ndarray))[:-1]}, device='cuda:0 (emulated)')"


ndarray = DeviceArray
_ALLOCATOR: list[Any] = [None]


def _hook(name: str) -> Any:
    """A hook runtime/cuda/memory.py fills (Note [The emulator reaches the caching allocator through hooks])."""
    fn = getattr(emulator, name)
    if fn is None:
        raise RuntimeError("the emulated CUDA device is not set up: import runtime.cuda (or generated) first")
    return fn


def _allocate(nbytes: int) -> MemoryPointer:
    hook = _ALLOCATOR[0]
    if hook is None:
        return _hook("cuda_malloc")(nbytes, 0)
    return hook(nbytes)


def is_device_array(a: Any) -> bool:
    return isinstance(a, DeviceArray)


def empty(shape: Any, dtype: Any = float, order: str = "C") -> DeviceArray:
    return DeviceArray(shape, dtype, order=order)


def zeros(shape: Any, dtype: Any = float) -> DeviceArray:
    out = DeviceArray(shape, dtype)
    out.view(np.ndarray)[...] = 0
    return out


def ones(shape: Any, dtype: Any = float) -> DeviceArray:
    """Filled in place: NumPy's `ones` through `__getattr__` would make a host array and copy it over."""
    out = DeviceArray(shape, dtype)
    out.view(np.ndarray)[...] = 1
    return out


def asarray(a: Any, dtype: Any = None) -> DeviceArray:
    """`a` on the device (no copy when it is a device array of `dtype` already)."""
    if isinstance(a, DeviceArray) and (dtype is None or a.dtype == np.dtype(dtype)):
        return a
    host = np.asarray(a.view(np.ndarray) if isinstance(a, DeviceArray) else a, dtype=dtype)
    out = DeviceArray(host.shape, host.dtype)
    out.view(np.ndarray)[...] = host
    return out


def array(a: Any, dtype: Any = None, copy: bool = True) -> DeviceArray:
    if not copy:
        return asarray(a, dtype)
    host = np.asarray(a.view(np.ndarray) if isinstance(a, DeviceArray) else a, dtype=dtype)
    out = DeviceArray(host.shape, host.dtype)
    out.view(np.ndarray)[...] = host
    return out


def ascontiguousarray(a: Any) -> DeviceArray:
    if isinstance(a, DeviceArray) and a.flags.c_contiguous:
        return a
    return array(a)


def from_dlpack(ext: Any) -> DeviceArray:
    return np.from_dlpack(ext).view(DeviceArray)


def _as_strided(x: Any, shape: Any = None, strides: Any = None, **kwargs: Any) -> Any:
    return np.lib.stride_tricks.as_strided(x, shape, strides, subok=True)


lib = SimpleNamespace(stride_tricks=SimpleNamespace(as_strided=_as_strided))


class RandomState:
    """cupy.random.RandomState's methods over a NumPy Generator (a different stream than CuPy's)."""

    _NAMES = {"random_sample": "random", "randint": "integers", "rand": "random"}

    def __init__(self, seed: int | None = None) -> None:
        self._gen = np.random.Generator(np.random.PCG64(seed))

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._gen, self._NAMES.get(name, name))

        def on_device(*args: Any, **kwargs: Any) -> Any:
            return _to_device(np.asarray(method(*args, **kwargs)))

        return on_device


random = SimpleNamespace(RandomState=RandomState)


# ---- devices, streams, events -------------------------------------------------------------------------
class CUDARuntimeError(RuntimeError):
    def __init__(self, status: int, message: str = "") -> None:
        super().__init__(message or f"CUDA runtime error {status} (emulated)")
        self.status = status


_state = threading.local()
_stream_ids = itertools.count(1)


class Device:
    """Device 0, the only one; `with Device(0):` is accepted and changes nothing."""

    def __init__(self, device: int | None = None) -> None:
        self.id = 0 if device is None else int(device)
        if self.id != 0:
            raise CUDARuntimeError(101, f"invalid device ordinal {self.id} (the emulated device is cuda:0)")

    compute_capability = "80"

    def use(self) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def __enter__(self) -> Device:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class Stream:
    """An emulated stream: a handle; kernels run when launched, so it is always idle."""

    def __init__(self, null: bool = False, non_blocking: bool = False, priority: int = 0,
                 ptr: int | None = None) -> None:
        self.ptr = 0 if null else (next(_stream_ids) if ptr is None else int(ptr))
        self.device_id = 0
        self._previous: list[Stream] = []

    done = True

    def synchronize(self) -> None:
        pass

    def wait_event(self, event: Event) -> None:
        pass

    def record(self, event: Event | None = None) -> Event:
        event = event or Event()
        event.record(self)
        return event

    def use(self) -> Stream:
        _state.stream = self
        return self

    def __enter__(self) -> Stream:
        self._previous.append(get_current_stream())
        _state.stream = self
        return self

    def __exit__(self, *exc: object) -> None:
        _state.stream = self._previous.pop()


def ExternalStream(ptr: int, device_id: int = 0) -> Stream:
    return Stream(ptr=ptr)


_NULL = Stream(null=True)


def get_current_stream(device_id: int | None = None) -> Stream:
    return getattr(_state, "stream", _NULL)


class Event:
    """An emulated event: complete when recorded; timing is host wall-clock time between records."""

    def __init__(self, block: bool = False, disable_timing: bool = False, interprocess: bool = False) -> None:
        self.disable_timing = disable_timing
        self.time: float | None = None

    done = True

    def record(self, stream: Stream | None = None) -> None:
        self.time = time.perf_counter()

    def synchronize(self) -> None:
        pass


def get_elapsed_time(start: Event, end: Event) -> float:
    if start.disable_timing or end.disable_timing:
        raise CUDARuntimeError(6, "cudaErrorInvalidResourceHandle: an event was created with timing disabled")
    if start.time is None or end.time is None:
        raise CUDARuntimeError(600, "cudaErrorNotReady: both events must be recorded")
    return (end.time - start.time) * 1000.0


def _properties(index: int = 0) -> dict[str, Any]:
    Device(index)
    total = _hook("get_allocator")(0)._raw.capacity
    return {"name": DEVICE_NAME.encode(), "multiProcessorCount": SM_COUNT, "totalGlobalMem": total,
            "major": 8, "minor": 0, "warpSize": 32, "maxThreadsPerBlock": 1024, "sharedMemPerBlock": 49152,
            "emulated": True}


def _mem_info() -> tuple[int, int]:
    return _hook("get_allocator")(0)._raw.mem_info()


_current_device = [0]
runtime = SimpleNamespace(
    getDeviceCount=lambda: 1,
    getDevice=lambda: _current_device[0],
    setDevice=lambda i: Device(i) and None,
    deviceSynchronize=lambda: None,
    getDeviceProperties=_properties,
    memGetInfo=_mem_info,
    CUDARuntimeError=CUDARuntimeError,
    errorMemoryAllocation=2,
)


def set_allocator(hook: Any = None) -> None:
    """CuPy's allocator hook: where `empty` (and every other new device array) gets its memory."""
    _ALLOCATOR[0] = hook


class MemoryPool:
    def malloc(self, nbytes: int) -> MemoryPointer:
        return _hook("cuda_malloc")(nbytes, 0)


cuda = SimpleNamespace(
    Device=Device, Stream=Stream, ExternalStream=ExternalStream, Event=Event,
    get_current_stream=get_current_stream, get_elapsed_time=get_elapsed_time, runtime=runtime,
    MemoryPointer=MemoryPointer, UnownedMemory=UnownedMemory, set_allocator=set_allocator,
    MemoryPool=MemoryPool,
)



def _to_device(result: Any) -> Any:
    if result.__class__ is np.ndarray:  # copied into the pool, as CuPy allocates its results there
        out = DeviceArray(result.shape, result.dtype)
        out.view(np.ndarray)[...] = result
        return out
    if isinstance(result, tuple | list):
        return type(result)(_to_device(r) for r in result)
    return result


def __getattr__(name: str) -> Any:
    """Every other CuPy function is NumPy's, with array results placed on the emulated device."""
    target = getattr(np, name)
    if not callable(target) or isinstance(target, type):
        return target

    def on_device(*args: Any, **kwargs: Any) -> Any:
        return _to_device(target(*args, **kwargs))

    on_device.__name__ = name
    globals()[name] = on_device  # resolved once
    return on_device
