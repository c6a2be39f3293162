"""The array behind a tensor on device 'meta': sizes, strides, dtype and offset, and no data.

Note [Meta tensors]
A meta tensor (`device='meta'`) has everything of a tensor but its values: shape, strides, dtype,
storage offset, a Storage of the right size. Kernels registered under the Meta dispatch key compute
only what their outputs look like (runtime/kernels/meta_*.py by hand, generated/_meta_kernels.py from
the pointwise specs), which is how `G.compile` learns shapes without running anything.

Its `_data` is a `MetaArray`: an ndarray subclass over an address-space reservation of the storage's
size (an anonymous, read-only, MAP_NORESERVE mapping: no page is ever backed by memory, whatever the
size). Being an ndarray, it gives every view its geometry exactly as a CPU tensor's array does
(`transpose`, basic indexing, `as_strided`, a reshape that needs no copy), so the view kernels serve
meta tensors unchanged. Everything that would read or compute values refuses with `MetaDataError`:
NumPy functions and ufuncs (`__array_ufunc__`, `__array_function__`), `copy`, `astype`, `item`,
`tolist`, `tobytes`, `fill`, a reshape that would copy, an index that would gather. A kernel that is not
a Meta kernel reaching a meta tensor therefore fails loudly instead of computing on zeros. Reading the
memory some other way (the buffer protocol) sees zero pages: it can never crash.
"""

from __future__ import annotations

import mmap
from typing import Any, NoReturn

import numpy as np

# the largest address-space reservation tried (1 PiB); beyond it a one-page stand-in is used
_MAX_RESERVE = 1 << 50
_PAGE = mmap.PAGESIZE


class MetaDataError(RuntimeError):
    """A meta tensor's values were asked for: it has none."""


def no_data(what: str) -> NoReturn:
    raise MetaDataError(f"{what}: meta tensors have no data (a tensor on device 'meta' holds only its shape, "
                        f"strides and dtype)")


def _reservation(nbytes: int) -> Any:
    """Read-only anonymous memory of `nbytes` (at least one page) that is never backed by RAM."""
    size = max(nbytes, 1)
    size += (-size) % _PAGE
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_NORESERVE", 0)
    return mmap.mmap(-1, size, flags=flags, prot=mmap.PROT_READ)


class MetaArray(np.ndarray):
    """The `_data` of a meta tensor (Note [Meta tensors]): geometry without values."""

    def __array_finalize__(self, obj: Any) -> None:
        pass

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        no_data(f"NumPy's {getattr(ufunc, '__name__', ufunc)}")

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        name = getattr(func, "__name__", str(func))
        if name in _GEOMETRY:  # views and shape queries only
            return _GEOMETRY[name](*args, **kwargs)
        no_data(f"NumPy's {name}")

    def __getitem__(self, key: Any) -> Any:
        parts = key if isinstance(key, tuple) else (key,)
        for part in parts:
            if not (part is None or part is Ellipsis or isinstance(part, int | np.integer | slice)):
                no_data("indexing with a tensor or a list")
        result = np.ndarray.__getitem__(self, key)
        if not isinstance(result, MetaArray):
            no_data("reading an element")
        return result

    def __setitem__(self, key: Any, value: Any) -> None:
        no_data("writing elements")

    def reshape(self, *shape: Any, order: str = "C") -> MetaArray:  # type: ignore[override]
        """A reshape that is a view; one that would copy raises ValueError (callers then take their general path)."""
        if len(shape) == 1 and not isinstance(shape[0], int | np.integer):
            shape = tuple(shape[0])
        view = self.view()
        try:
            view.shape = shape  # NumPy's shape setter never copies: AttributeError when a copy is needed
        except AttributeError as e:
            raise ValueError(f"a meta array of shape {self.shape} cannot be viewed as {shape}: {e}") from None
        return view

    def copy(self, order: str = "C") -> NoReturn:  # type: ignore[override]
        no_data("copying")

    def astype(self, *args: Any, **kwargs: Any) -> NoReturn:  # type: ignore[override]
        no_data("converting values")

    def item(self, *args: Any) -> NoReturn:  # type: ignore[override]
        no_data("item()")

    def tolist(self) -> NoReturn:  # type: ignore[override]
        no_data("tolist()")

    def tobytes(self, order: str = "C") -> NoReturn:  # type: ignore[override]
        no_data("tobytes()")

    def fill(self, value: Any) -> NoReturn:  # type: ignore[override]
        no_data("fill()")

    def get(self) -> NoReturn:
        no_data("copying to the host")

    def __reduce__(self) -> NoReturn:  # type: ignore[override]
        no_data("pickling")

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, strides={self.strides}, dtype={self.dtype})"

    __str__ = __repr__


def _swapaxes(a: MetaArray, axis1: int, axis2: int) -> MetaArray:
    return a.swapaxes(axis1, axis2)


def _transpose(a: MetaArray, axes: Any = None) -> MetaArray:
    return a.transpose(axes)


def _shape(a: MetaArray) -> tuple[int, ...]:
    return a.shape


def _ndim(a: MetaArray) -> int:
    return a.ndim


def _as_strided(x: MetaArray, shape: Any = None, strides: Any = None, subok: bool = False,
                writeable: bool = True) -> MetaArray:
    return np.ndarray.__new__(MetaArray, x.shape if shape is None else tuple(shape), x.dtype, buffer=_root(x),
                              offset=_offset(x), strides=x.strides if strides is None else tuple(strides))


def _broadcast_to(a: MetaArray, shape: Any, subok: bool = False) -> MetaArray:
    shape = tuple(shape)
    lead = len(shape) - a.ndim
    strides = [0] * lead + [0 if n == 1 and m != 1 else s
                            for n, m, s in zip(a.shape, shape[lead:], a.strides, strict=True)]
    return _as_strided(a, shape, strides)


_GEOMETRY = {"swapaxes": _swapaxes, "transpose": _transpose, "shape": _shape, "ndim": _ndim,
             "as_strided": _as_strided, "broadcast_to": _broadcast_to}


def _root(a: MetaArray) -> MetaArray:
    root = a
    while isinstance(root.base, MetaArray):
        root = root.base
    return root


def _offset(a: MetaArray) -> int:
    return a.__array_interface__["data"][0] - _root(a).__array_interface__["data"][0]


def meta_array(shape: tuple[int, ...], strides: tuple[int, ...], dtype: Any, offset: int = 0) -> MetaArray:
    """A MetaArray of `shape` and element `strides` starting `offset` elements into a storage just large enough."""
    dt = np.dtype(dtype)
    item = dt.itemsize
    extent = 0 if 0 in shape else offset + 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))
    nbytes = extent * item
    if nbytes > _MAX_RESERVE:
        raise RuntimeError(f"a meta tensor of sizes {list(shape)} spans {nbytes} bytes: more than the "
                           f"{_MAX_RESERVE} bytes of address space opgen reserves for one")
    # the root holds the storage's elements, as a CPU tensor's root array does (as_strided reads it)
    root = np.ndarray.__new__(MetaArray, (extent,), dt, buffer=_reservation(nbytes))
    return np.ndarray.__new__(MetaArray, shape, dt, buffer=root, offset=offset * item,
                              strides=tuple(s * item for s in strides))


def is_meta_array(a: Any) -> bool:
    return isinstance(a, MetaArray)
