"""The C++ kernels of convolution and max pooling (runtime/kernels/conv_pool.cpp): im2col and col2im, a
tiled transpose, the depthwise convolution and its two gradients, the max pool and its backward, each one
pass; the callers (conv_ops.py, nn_ops.py) keep their NumPy paths for when these answer None.

Note [Compiled convolution and pooling kernels]
The NumPy convolution makes its columns by padding the input into a buffer and copying a strided window
view of it (a copy whose inner loops are OW long), and folds the input gradient back by kh*kw strided adds;
the NumPy max pool takes a running maximum over kh*kw views, then sweeps them again for the position. In
C++ each is one loop nest over the windows, with the padding tested instead of written: im2col writes
every column entry once (memcpy runs at stride 1), col2im adds each one once, the max pool reads each
window position once and keeps its index as it goes. So one code path serves every stride, padding,
dilation, group count and kernel size, exactly (no junk columns at padded width, no finite-weight test).
- Layout. Columns are (N, C*kh*kw, OH*OW), channel-major (C*kh*kw, N, OH*OW) or batch-last
  (C*kh*kw, OH*OW*N) (Note [Layouts of the compiled columns] in conv_ops.py); any strides of the input.
  The batch-last copies of the input and gradients, and the results back, go through `transpose`, in
  cache tiles: NumPy's transposing copy of a batch reads one cache line per element (1.5 ms for the 2 MB
  input of bench/bench_conv.py's stride-2 layer).
- Depthwise. A convolution with one input channel per group (groups == C > 1) is computed directly: as
  GEMMs it is one per group of a single row (the depthwise layer of bench/bench_conv.py: 0.36x the NumPy
  GEMMs). With one input channel in all (a model's first layer) the GEMMs are faster (2.5x) and stay.
- Dtypes. im2col and the transpose are copies and run for elements of 1, 2, 4 or 8 bytes; col2im, the
  depthwise kernels and the pool's backward add, for float32 and float64; the max pool compares, for
  float32, float64 and the integer types. Others (float16, bfloat16, complex, bool), CuPy or emulated-device
  arrays, empty inputs and misaligned ones go to NumPy.
- Results. Copies and the max pool are exact; the max pool takes PyTorch's rule (a greater value or a NaN
  replaces the running maximum, so the last NaN of a window wins, and ties the first position). col2im, the
  depthwise kernels and the backward sum in their own order, which may round differently from the NumPy
  fold and GEMMs (float tolerance).
- Building. The library is built as the compound pointwise one (Note [Compiled eager pointwise kernels],
  runtime/kernels/compiled_pointwise.py): in the background on first use, cached on disk, NumPy meanwhile,
  none without a C++ compiler, none with OPGEN_EAGER_CPP=0. `wait()` blocks until it is loaded (the
  benchmarks call it so that they time the C++ path). Every call runs on the calling thread.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from runtime.kernels import compiled_pointwise

_LIBRARY = compiled_pointwise.library(Path(__file__).with_name("conv_pool.cpp"))

_COPY = {1: "1", 2: "2", 4: "4", 8: "8"}
_ADD = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64"}
_COMPARE = {**_ADD, **{np.dtype(t): np.dtype(t).name for t in (np.int8, np.uint8, np.int16, np.int32, np.int64)}}


class _Entries:
    """The library's entries with their argument types, declared once it is loaded."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        p, i64 = ctypes.c_void_p, ctypes.c_longlong
        self.im2col = {size: _declare(lib, f"opgen_im2col_{s}", [p, p, p], None) for size, s in _COPY.items()}
        self.col2im = {dt: _declare(lib, f"opgen_col2im_{s}", [p, p, p], None) for dt, s in _ADD.items()}
        self.depthwise = {(kind, dt): _declare(lib, f"opgen_depthwise_{kind}_{s}", [p, p, p, i64, p], None)
                          for kind in ("forward", "backward_input", "backward_weight") for dt, s in _ADD.items()}
        self.transpose = {size: _declare(lib, f"opgen_transpose_{s}", [p, i64, i64, p], None)
                          for size, s in _COPY.items()}
        self.im2col_last = {size: _declare(lib, f"opgen_im2col_batch_last_{s}", [p, p, p], None)
                            for size, s in _COPY.items()}
        self.col2im_last = {dt: _declare(lib, f"opgen_col2im_batch_last_{s}", [p, p, p], None)
                            for dt, s in _ADD.items()}
        self.max_pool = {dt: _declare(lib, f"opgen_max_pool_{s}", [p, p, p, p], None) for dt, s in _COMPARE.items()}
        self.max_pool_backward = {dt: _declare(lib, f"opgen_max_pool_backward_{s}", [p, p, i64, i64, i64, p],
                                               ctypes.c_int) for dt, s in _ADD.items()}


def _declare(lib: ctypes.CDLL, name: str, args: list[Any], result: Any) -> Any:
    fn = getattr(lib, name)
    fn.argtypes, fn.restype = args, result
    return fn


_entries: list[_Entries] = []


def _loaded() -> _Entries | None:
    if _off:
        return None
    if _entries:
        return _entries[0]
    lib = _LIBRARY.loaded()
    if lib is None:
        return None
    _entries.append(_Entries(lib))
    return _entries[0]


_off: list[bool] = []


@contextlib.contextmanager
def numpy_only() -> Iterator[None]:
    """Within the block, every kernel answers None (the NumPy paths run): for benchmarks that compare."""
    _off.append(True)
    try:
        yield
    finally:
        _off.pop()


def ready(a: Any) -> bool:
    """Whether the library is loaded (starting its build if not) and `a` is a NumPy array (not CuPy's or the
    emulated device's)."""
    return a.__class__ is np.ndarray and _loaded() is not None


def wait(timeout: float | None = None) -> str:
    """Start the build if needed and wait for it: "ready", "unavailable" (no compiler or turned off),
    "failed" or "building" (timed out)."""
    state = _LIBRARY.wait(timeout)
    return "unavailable" if state == "idle" else state  # idle: OPGEN_EAGER_CPP=0 keeps it from starting


def _element_strides(a: np.ndarray) -> tuple[int, ...] | None:
    """`a`'s strides in elements; None for an array C++ cannot read (not NumPy's own class, empty, a
    stride or an address that is not a whole number of elements). Only once the library is loaded."""
    size = a.itemsize
    if a.__class__ is not np.ndarray or not a.size or _LIBRARY.address(a) % size:
        return None
    if any(s % size for s in a.strides):
        return None
    return tuple(s // size for s in a.strides)


def _geometry(shape4: Sequence[int], strides4: Sequence[int], kernel: Sequence[int], st: Sequence[int],
              pad: Sequence[int], dil: Sequence[int], oh: int, ow: int, cols: Sequence[int] = (0, 0, 0)) -> Any:
    """The `g` operand of conv_pool.cpp's window entries."""
    return np.array([*shape4, *strides4, *kernel, *st, *pad, *dil, oh, ow, *cols], dtype=np.int64)


def im2col(x: Any, kernel: Sequence[int], st: Sequence[int], pad: Sequence[int], dil: Sequence[int], oh: int,
           ow: int, channel_major: bool, alloc: Callable[[tuple[int, ...]], Any]) -> Any:
    """The columns of x (N, C, H, W), (N, C*kh*kw, OH*OW) or with `channel_major` (C*kh*kw, N, OH*OW), in the
    C-contiguous array `alloc(shape)` (of x's dtype); None where C++ cannot make them."""
    entries = _loaded()
    if entries is None or x.itemsize not in _COPY:
        return None
    xs = _element_strides(x)
    if xs is None:
        return None
    n, c = x.shape[:2]
    rows, length = c * kernel[0] * kernel[1], oh * ow
    shape = (rows, n, length) if channel_major else (n, rows, length)
    out = alloc(shape)
    cols = (length, n * length, 1) if channel_major else (rows * length, length, 1)
    g = _geometry(x.shape, xs, kernel, st, pad, dil, oh, ow, cols)
    address = _LIBRARY.address
    entries.im2col[x.itemsize](address(x), address(g), address(out))
    return out


def im2col_batch_last(xt: Any, kernel: Sequence[int], st: Sequence[int], pad: Sequence[int], dil: Sequence[int],
                      oh: int, ow: int, alloc: Callable[[tuple[int, ...]], Any]) -> Any:
    """The batch-last columns (C*kh*kw, OH*OW*N) of the input whose (C, H, W, N) array is xt, in the
    C-contiguous array `alloc(shape)`; None where C++ cannot make them."""
    entries = _loaded()
    if entries is None or xt.itemsize not in _COPY:
        return None
    xs = _element_strides(xt)
    if xs is None:
        return None
    c, h, w, n = xt.shape
    out = alloc((c * kernel[0] * kernel[1], oh * ow * n))
    g = _geometry((n, c, h, w), (xs[3], xs[0], xs[1], xs[2]), kernel, st, pad, dil, oh, ow)
    address = _LIBRARY.address
    entries.im2col_last[xt.itemsize](address(xt), address(g), address(out))
    return out


def col2im_batch_last(cols: Any, size: Sequence[int], kernel: Sequence[int], st: Sequence[int],
                      pad: Sequence[int], dil: Sequence[int], oh: int, ow: int, out: Any) -> Any:
    """Batch-last columns (C*kh*kw, OH*OW*N), C-contiguous, summed back into their windows: `out`, a
    C-contiguous (C, H, W, N) array of their dtype (`size` is (N, C, H, W)); None where C++ cannot."""
    entries = _loaded()
    if entries is None or cols.dtype not in _ADD or not cols.flags.c_contiguous or _element_strides(cols) is None:
        return None
    g = _geometry(size, (0, 0, 0, 0), kernel, st, pad, dil, oh, ow)
    address = _LIBRARY.address
    entries.col2im_last[cols.dtype](address(cols), address(g), address(out))
    return out


def transpose(a: Any, out: Any) -> Any:
    """`out` (K, R) set to the transpose of `a` (R, K), both C-contiguous NumPy arrays of one dtype, in cache
    tiles; None where C++ cannot do it."""
    entries = _loaded()
    if entries is None or a.itemsize not in _COPY or not a.flags.c_contiguous or not out.flags.c_contiguous:
        return None
    if _element_strides(a) is None or _element_strides(out) is None or out.dtype != a.dtype:
        return None
    address = _LIBRARY.address
    entries.transpose[a.itemsize](address(a), a.shape[0], a.shape[1], address(out))
    return out


def _depthwise(kind: str, x: Any, dense: Any, size: Sequence[int], o: int, kernel: Sequence[int],
               st: Sequence[int], pad: Sequence[int], dil: Sequence[int], oh: int, ow: int,
               out_shape: Sequence[int]) -> Any:
    """Call entry opgen_depthwise_<kind>: `x` is read with its strides (None: the input is not read),
    `dense` made C-contiguous; a new C-contiguous array of `out_shape`, or None where C++ cannot."""
    entries = _loaded()
    if entries is None or dense.dtype not in _ADD or (x is not None and x.dtype != dense.dtype):
        return None
    xs = (0, 0, 0, 0) if x is None else _element_strides(x)
    if xs is None or _element_strides(dense) is None:
        return None
    dense = np.ascontiguousarray(dense)
    out = np.empty(tuple(out_shape), dense.dtype)
    g = _geometry(size, xs, kernel, st, pad, dil, oh, ow)
    return out, entries.depthwise[(kind, dense.dtype)], g, dense


def depthwise_forward(x: Any, w: Any, st: Sequence[int], pad: Sequence[int], dil: Sequence[int], oh: int,
                      ow: int) -> Any:
    """The output (N, O, OH, OW) of a depthwise convolution of x (N, C, H, W) with w (O, 1, kh, kw), a new
    array; None where C++ cannot compute it."""
    o, _, kh, kw = w.shape
    call = _depthwise("forward", x, w, x.shape, o, (kh, kw), st, pad, dil, oh, ow, (x.shape[0], o, oh, ow))
    if call is None:
        return None
    out, fn, g, w = call
    address = _LIBRARY.address
    fn(address(x), address(g), address(w), o, address(out))
    return out


def depthwise_backward_input(grad: Any, w: Any, size: Sequence[int], st: Sequence[int], pad: Sequence[int],
                             dil: Sequence[int]) -> Any:
    """The input gradient (`size`, N, C, H, W) of a depthwise convolution with w (O, 1, kh, kw) from its
    output gradient (N, O, OH, OW); None where C++ cannot compute it."""
    o, _, kh, kw = w.shape
    if w.dtype != grad.dtype:
        return None
    call = _depthwise("backward_input", None, grad, size, o, (kh, kw), st, pad, dil, *grad.shape[2:], size)
    if call is None:
        return None
    out, fn, g, grad = call
    w = np.ascontiguousarray(w)
    address = _LIBRARY.address
    fn(address(grad), address(g), address(w), o, address(out))
    return out


def depthwise_backward_weight(grad: Any, x: Any, kernel: Sequence[int], st: Sequence[int], pad: Sequence[int],
                              dil: Sequence[int]) -> Any:
    """The weight gradient (O, 1, kh, kw) of a depthwise convolution of x (N, C, H, W) from its output
    gradient (N, O, OH, OW); None where C++ cannot compute it."""
    o = grad.shape[1]
    call = _depthwise("backward_weight", x, grad, x.shape, o, kernel, st, pad, dil, *grad.shape[2:],
                      (o, 1, *kernel))
    if call is None:
        return None
    out, fn, g, grad = call
    address = _LIBRARY.address
    fn(address(grad), address(g), address(x), o, address(out))
    return out


def can_add(a: Any) -> bool:
    """Whether col2im and the max pool's backward run in C++ on arrays like `a` (NumPy's, of a dtype they
    add, once the library is loaded)."""
    return a.__class__ is np.ndarray and a.dtype in _ADD and _loaded() is not None


def col2im(cols: Any, size: Sequence[int], kernel: Sequence[int], st: Sequence[int], pad: Sequence[int],
           dil: Sequence[int], oh: int, ow: int, channel_major: bool) -> Any:
    """A new C-contiguous (N, C, H, W) array (`size`): columns (N, C*kh*kw, OH*OW), or with `channel_major`
    (C*kh*kw, N, OH*OW), summed back into their windows; None where C++ cannot do it."""
    entries = _loaded()
    if entries is None or cols.dtype not in _ADD:
        return None
    cs = _element_strides(cols)
    if cs is None:
        return None
    if channel_major:
        cs = (cs[1], cs[0], cs[2])
    out = np.empty(tuple(size), cols.dtype)
    g = _geometry(size, (0, 0, 0, 0), kernel, st, pad, dil, oh, ow, cs)
    address = _LIBRARY.address
    entries.col2im[cols.dtype](address(cols), address(g), address(out))
    return out


def max_pool(a: Any, kernel: Sequence[int], st: Sequence[int], pad: Sequence[int], dil: Sequence[int], oh: int,
             ow: int) -> tuple[Any, Any] | None:
    """(maxima, flat int64 indices) of max_pool2d_with_indices over a (N, C, H, W) or (C, H, W), new
    C-contiguous arrays; None where C++ cannot do it (the caller has checked the geometry)."""
    entries = _loaded()
    if entries is None or a.dtype not in _COMPARE:
        return None
    strides = _element_strides(a)
    if strides is None:
        return None
    shape4, strides4 = (a.shape, strides) if a.ndim == 4 else ((1, *a.shape), (0, *strides))
    out = np.empty((*a.shape[:-2], oh, ow), a.dtype)
    idx = np.empty(out.shape, np.int64)
    g = _geometry(shape4, strides4, kernel, st, pad, dil, oh, ow)
    address = _LIBRARY.address
    entries.max_pool[a.dtype](address(a), address(g), address(out), address(idx))
    return out, idx


def max_pool_backward(grad: Any, indices: Any, planes: int, hw: int) -> Any:
    """A new (planes * hw,) array: each plane's output gradients added at their flat indices; None where C++
    cannot do it, or an index is outside its plane (the NumPy path then reports it)."""
    entries = _loaded()
    if entries is None or grad.dtype not in _ADD or indices.dtype != np.int64:
        return None
    if _element_strides(grad) is None or _element_strides(indices) is None:
        return None
    grad, indices = np.ascontiguousarray(grad), np.ascontiguousarray(indices)
    out = np.empty(planes * hw, grad.dtype)
    address = _LIBRARY.address
    bad = entries.max_pool_backward[grad.dtype](address(grad), address(indices), planes, grad.size // planes, hw,
                                                address(out))
    return None if bad else out
