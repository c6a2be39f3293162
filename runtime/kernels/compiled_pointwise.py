"""Eager C++ kernels of the compound pointwise ops: generated/cpu/compound_pointwise.cpp, compiled once per
machine, called by the NumPy kernels of generated/_cpu_kernels.py above a measured size.

Note [Compiled eager pointwise kernels]
A compound op (Note [Compound pointwise ops] in codegen/render/compound_pointwise.py) makes several NumPy
passes; its C++ kernel makes one. The generated NumPy kernel of such an op asks `Library.run` first when an
input's elements times the op's NumPy passes reach `Library.min_work`, and computes with NumPy when it
answers None. `run` answers
only for float32 or float64 arrays of the result dtype that broadcast together, and only once the library
is loaded; it computes into a new dense array, through the `__contig` entry when every input is dense with
the output's shape and the `__strided` one otherwise (dims of size 1 dropped and dims that are contiguous
in every input merged first, so a broadcast or a transposed view costs one loop over rows).
- Building. The first call that reaches `run` starts one background thread that compiles the whole source
  with G.compile's toolchain (runtime/compile/cpp_build.py: the system C++ compiler, the on-disk cache of
  Note [The compiled-kernel cache], which verifies an entry's SHA-256 before it is loaded and rebuilds a
  corrupted one). Until it is loaded the ops run on NumPy, so no call waits for the compiler (11 to 40 s on
  the shared 2-core build machine, by its load; from the cache, 0.2 to 0.7 s, most of it importing
  runtime.compile on the build thread). The layers allow
  runtime.kernels no import of runtime.compile: the top layer (runtime/api.py) installs the builder
  (`install_builder`). A builder that answers None (no C++ compiler) leaves NumPy in place silently; one that
  raises warns once and leaves NumPy in place. `OPGEN_EAGER_CPP=0` turns the whole path off (read once,
  when generated/_cpu_kernels.py is imported); `wait()` blocks until a build started has finished.
- Threshold. For a small input NumPy's passes cost less than the call (argument checks, the ctypes call,
  the strides of a strided call: about 5 us on the build machine), and what the C++ kernel saves grows with
  the passes it replaces, so the threshold is on the work, elements x passes: `MIN_WORK`.
  bench/bench_eager_compound.py --threshold measures, per compiled op and dtype, the smallest power-of-two
  size from which the C++ kernel is the faster at every larger size tried (a contiguous input, one thread,
  the median of paired rounds' ratios). On the shared 2-core build machine (load 7 to 15: each figure moved
  by 4x between runs) that size times the op's passes was 400 to 5000 for the ops of costly helpers or
  many passes (sigmoid, erf, hardswish, hardtanh, elu), 10^4 to 5 10^4 for leaky_relu, rsqrt, hypot,
  hardsigmoid, and 2.5 10^4 to 4 10^5 for lerp, addcmul, addcdiv, xlogy (float32 the highest). MIN_WORK
  = 65536 keeps the few-pass ops on NumPy to about 2 10^4 elements (lerp's 3 passes: 21846; sigmoid's 10:
  6554; erf, a Python call per element: 656); near the threshold either way costs a few microseconds.
- Results. Each kernel computes in its dtype, rounding at every step, as the NumPy kernel does; constants and
  the `op_*` functions (opgen_math.cuh, the C library's) may round differently from NumPy's loops, within a
  few units in the last place of the dtype. Gradients are unchanged: the backward formulas call the same
  ops. The data pointer of an array is read from the array object (`_DATA_OFFSET`, checked against
  `ndarray.ctypes.data` when the library loads; `ctypes.data` itself, ten times slower, where it differs).
"""

from __future__ import annotations

import ctypes
import math
import os
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

MIN_WORK = 65536  # elements x NumPy passes (Note [Compiled eager pointwise kernels]: Threshold)
NEVER = 1 << 62  # min_work of a library that is off
ENV = "OPGEN_EAGER_CPP"

Builder = Callable[[str], "ctypes.CDLL | None"]
_builder: Builder | None = None


def install_builder(builder: Builder | None) -> None:
    """Set how the libraries are built: `builder(source)` compiles C++ text (None: no compiler here)."""
    global _builder
    _builder = builder


def enabled_by_environment() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "off", "false", "no")


_DATA_OFFSET = object.__basicsize__  # PyArrayObject: the object header, then `char *data`
_address = ctypes.c_void_p.from_address


def _fast_pointer(a: np.ndarray) -> int:
    return _address(id(a) + _DATA_OFFSET).value or 0


def _slow_pointer(a: np.ndarray) -> int:
    return a.ctypes.data


def _pointer_reader() -> Callable[[np.ndarray], int]:
    probe = np.arange(8.0)[3::2]
    return _fast_pointer if _fast_pointer(probe) == probe.ctypes.data else _slow_pointer


_CTYPES = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64"}


class Library:
    """The compiled kernels of one C++ source (Note [Compiled eager pointwise kernels])."""

    def __init__(self, source: Path, *, enabled: bool | None = None) -> None:
        self.source = source
        self.min_work = MIN_WORK if (enabled_by_environment() if enabled is None else enabled) else NEVER
        self.state = "idle"  # idle -> building -> ready | unavailable | failed
        self.build_seconds: float | None = None
        self._lib: ctypes.CDLL | None = None
        self._entries: dict[tuple[str, np.dtype[Any], str], Any] = {}
        self._pointer: Callable[[np.ndarray], int] = _slow_pointer
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    # -- building ----------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the background build, once (a no-op when off, started or without a builder)."""
        if self.state != "idle" or self.min_work >= NEVER:
            return
        with self._lock:
            if self.state != "idle":
                return
            builder = _builder
            if builder is None:
                self.state = "unavailable"
                return
            self.state = "building"
            self._thread = threading.Thread(target=self._build, args=(builder,), name="opgen-eager-cpp",
                                            daemon=True)
            self._thread.start()

    def _build(self, builder: Builder) -> None:
        import time

        began = time.perf_counter()
        try:
            lib = builder(self.source.read_text())
        except Exception as e:  # a compiler that fails: say it once, keep NumPy
            self.state = "failed"
            warnings.warn(f"opgen: the eager C++ kernels of {self.source.name} did not build; the ops run on "
                          f"NumPy ({type(e).__name__}: {str(e)[:2000]})", RuntimeWarning, stacklevel=1)
            return
        if lib is None:  # no C++ compiler: NumPy, silently
            self.state = "unavailable"
            return
        self._pointer = _pointer_reader()
        self._lib = lib
        self.build_seconds = time.perf_counter() - began
        self.state = "ready"

    def wait(self, timeout: float | None = None) -> str:
        """Start the build if it has not started, wait for it, and return the state."""
        self.start()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return self.state

    def _after_fork(self) -> None:
        if self.state == "building":  # the thread did not come along
            self.state, self._thread = "idle", None

    # -- calling -----------------------------------------------------------------------------------
    def loaded(self) -> ctypes.CDLL | None:
        """The loaded library, or None (starting the build) while it is not: for hand-written kernels that
        declare their own entries (runtime/kernels/conv_pool_cpp.py)."""
        if self._lib is None:
            self.start()
        return self._lib

    def address(self, a: np.ndarray) -> int:
        """The data pointer of NumPy array `a` (the fast read once the library is loaded)."""
        return self._pointer(a)

    def _entry(self, kernel: str, dtype: np.dtype[Any], path: str, tensors: int, scalars: int) -> Any:
        key = (kernel, dtype, path)
        fn = self._entries.get(key)
        if fn is None:
            assert self._lib is not None
            fn = getattr(self._lib, f"{kernel}__{_CTYPES[dtype]}__{path}")
            lead = [ctypes.c_longlong] if path == "contig" else [ctypes.c_int, ctypes.c_void_p]
            fn.argtypes = [*lead, ctypes.c_void_p, *[ctypes.c_void_p] * tensors, *[ctypes.c_double] * scalars]
            fn.restype = None
            self._entries[key] = fn
        return fn

    def run(self, kernel: str, dt: Any, arrays: tuple[Any, ...], scalars: tuple[Any, ...]) -> np.ndarray | None:
        """`kernel` of the compiled library over `arrays` (and the Python numbers `scalars`), into a new dense
        array of dtype `dt`; None when the library cannot run it (NumPy then does)."""
        if self._lib is None:
            self.start()
            return None
        dnp = dt.np
        if dnp not in _CTYPES:
            return None
        itemsize = dnp.itemsize
        pointer = self._pointer
        shape = arrays[0].shape
        for a in arrays:
            if a.__class__ is not np.ndarray or a.dtype != dnp:
                return None
            if a.shape != shape:
                try:
                    shape = np.broadcast_shapes(shape, a.shape)
                except ValueError:
                    return None  # NumPy raises the op's broadcast error
        try:
            numbers = [float(s) for s in scalars]
        except (TypeError, ValueError, OverflowError):
            return None
        n = math.prod(shape)
        if n == 0:
            return None
        ptrs = [pointer(a) for a in arrays]
        if any(p % itemsize for p in ptrs):
            return None  # a misaligned array: NumPy copes
        out = np.empty(shape, dnp)
        if all(a.shape == shape and a.flags.c_contiguous for a in arrays):
            fn = self._entry(kernel, dnp, "contig", len(arrays), len(numbers))
            fn(n, pointer(out), *ptrs, *numbers)
            return out
        meta = _strided_meta(shape, arrays, itemsize)
        if meta is None:
            return None
        fn = self._entry(kernel, dnp, "strided", len(arrays), len(numbers))
        fn(len(meta) // (len(arrays) + 1), pointer(meta), pointer(out), *ptrs, *numbers)
        return out


def _strided_meta(shape: tuple[int, ...], arrays: tuple[np.ndarray, ...], itemsize: int) -> np.ndarray | None:
    """The `meta` operand of a `__strided` entry: the dims (size-1 dims dropped, dims contiguous in every
    input merged), then each input's element strides over them (0 where it broadcasts)."""
    ndim = len(shape)
    per_input: list[list[int]] = []
    for a in arrays:
        pad = ndim - a.ndim
        strides = [0] * pad
        for size, step in zip(a.shape, a.strides, strict=True):
            if step % itemsize:
                return None
            strides.append(0 if size == 1 else step // itemsize)
        per_input.append(strides)
    dims: list[int] = []
    steps: list[list[int]] = [[] for _ in arrays]
    for d, size in enumerate(shape):
        if size == 1:
            continue
        if dims and all(s[-1] == st[d] * size for s, st in zip(steps, per_input, strict=True)):
            dims[-1] *= size  # merge into the dim before (contiguous across the two in every input)
            for s, st in zip(steps, per_input, strict=True):
                s[-1] = st[d]
            continue
        dims.append(size)
        for s, st in zip(steps, per_input, strict=True):
            s.append(st[d])
    if not dims:
        dims = [1]
        steps = [[0] for _ in arrays]
    return np.array([*dims, *(x for s in steps for x in s)], dtype=np.int64)


_LIBRARIES: list[Library] = []


def library(source: Path) -> Library:
    """The Library of `source`, made once per process (generated/_cpu_kernels.py holds it)."""
    for lib in _LIBRARIES:
        if lib.source == source:
            return lib
    lib = Library(source)
    _LIBRARIES.append(lib)
    return lib


def _reset_after_fork() -> None:
    for lib in _LIBRARIES:
        lib._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)
