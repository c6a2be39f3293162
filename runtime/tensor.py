"""The Tensor: a strided view of a Storage, with dtype, device and autograd metadata.

Note [Tensor data is a strided array view]
A tensor's geometry (sizes, strides in elements, storage offset) is held by `_data`, a NumPy
array on CPU or a CuPy array on CUDA that views the tensor's Storage with exactly those sizes and
strides. Kernels read and write `_data` directly; views are new arrays over the same memory, with
their geometry computed by the pure functions of runtime/strides.py. The Storage object itself is
created lazily (most kernel outputs are never viewed), from the root of `_data`'s view chain; every
view made through opgen shares its base's Storage, hence its version counter.

The op methods of Tensor (`add`, `sum`, `__add__` ...) are generated and installed on this class
when `generated` is imported; this file holds only what is not an operator.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime import dtypes
from runtime.device import CPU, Device
from runtime.dispatcher import AUTOGRAD_BIT, CPU_BIT, CUDA_BIT
from runtime.storage import Storage, root_array

_new = object.__new__
_NP_TO_DTYPE: dict[Any, dtypes.DType] = {d.np: d for d in dtypes.ALL_DTYPES if d.np is not None}


class Tensor:
    __slots__ = ("_data", "_storage", "_dtype", "_device", "_keys", "_requires_grad", "_grad", "_grad_fn",
                 "_output_nr", "_grad_accumulator", "_hooks", "_retains_grad", "_base", "_wrapped",
                 "__weakref__")

    _data: Any
    _storage: Storage | None
    _dtype: dtypes.DType
    _device: Device
    _keys: int

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("create tensors with G.tensor(...), G.empty(...), G.zeros(...) or G.from_numpy(...)")

    # -- construction (internal) ---------------------------------------------------------------
    @staticmethod
    def _wrap(array: Any, dtype: dtypes.DType | None = None) -> Tensor:
        """A new tensor over an existing NumPy/CuPy array view (no copy); the hot path of every kernel."""
        t = _new(Tensor)
        t._data = array
        t._dtype = dtype if dtype is not None else _NP_TO_DTYPE[array.dtype]
        if type(array) is np.ndarray:
            t._device = CPU
            t._keys = CPU_BIT
        else:
            t._device = Device("cuda", array.device.id)
            t._keys = CUDA_BIT
        t._storage = None
        t._requires_grad = False
        t._grad = None
        t._grad_fn = None
        t._output_nr = 0
        t._grad_accumulator = None
        t._hooks = None
        t._retains_grad = False
        t._base = None
        t._wrapped = False
        return t

    def _view(self, array: Any) -> Tensor:
        """A tensor over `array`, a view of this tensor's memory: it shares this tensor's Storage."""
        t = Tensor._wrap(array, self._dtype)
        t._storage = self._storage  # may still be None: resolved through _base (Note above)
        t._base = self._base if self._base is not None else self
        return t

    # -- geometry --------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return self._data.shape
        from runtime.strides import wrap_dim
        return self._data.shape[wrap_dim(dim, self._data.ndim)]

    def stride(self, dim: int | None = None) -> Any:
        item = self._dtype.itemsize
        strides = tuple(s // item for s in self._data.strides)
        if dim is None:
            return strides
        from runtime.strides import wrap_dim
        return strides[wrap_dim(dim, len(strides))]

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def nelement(self) -> int:
        return int(self._data.size)

    def element_size(self) -> int:
        return self._dtype.itemsize

    def data_ptr(self) -> int:
        if self._device.type == "cpu":
            return int(self._data.__array_interface__["data"][0])
        return int(self._data.data.ptr)

    def storage_offset(self) -> int:
        return (self.data_ptr() - self.storage.data_ptr()) // self._dtype.itemsize

    def is_contiguous(self) -> bool:
        from runtime.strides import is_contiguous
        return is_contiguous(self.shape, self.stride())

    @property
    def storage(self) -> Storage:
        s = self._storage
        if s is None:
            if self._base is not None:
                s = self._storage = self._base.storage
            else:
                s = self._storage = Storage(root_array(self._data), self._device)
        return s

    def untyped_storage(self) -> Storage:
        return self.storage

    def _storage_version(self) -> int:
        return self.storage.version

    def _bump_version(self) -> None:
        self.storage.version += 1

    @property
    def _version(self) -> int:
        return self.storage.version

    # -- dtype and device --------------------------------------------------------------------------
    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def device(self) -> Device:
        return self._device

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self._device.type == "cpu"

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    def get_device(self) -> int:
        return -1 if self._device.type == "cpu" else int(self._device.index or 0)

    # -- autograd surface (the engine is runtime.autograd) -----------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to "
                                   "use a computed variable in a subgraph that doesn't require differentiation "
                                   "use var_no_grad = var.detach().")
            return self
        if requires_grad and not self._dtype.is_floating_point:
            raise RuntimeError(f"only Tensors of floating point dtype can require gradients, got {self._dtype}")
        self._requires_grad = bool(requires_grad)
        self._keys = self._keys | AUTOGRAD_BIT if requires_grad else self._keys & ~AUTOGRAD_BIT
        return self

    @property
    def grad(self) -> Tensor | None:
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None and value.shape != self.shape:
            raise RuntimeError(f"assigned grad has shape {list(value.shape)} but the tensor has shape "
                               f"{list(self.shape)}")
        self._grad = value

    @property
    def grad_fn(self) -> Any:
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._grad_fn is None

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def data(self) -> Tensor:
        return self.detach()

    def detach(self) -> Tensor:
        """A new tensor sharing this one's data and storage, outside the autograd graph."""
        t = Tensor._wrap(self._data, self._dtype)
        t._storage = self.storage
        t._base = self._base
        return t

    def detach_(self) -> Tensor:
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        self._keys &= ~AUTOGRAD_BIT
        return self

    def retain_grad(self) -> None:
        from runtime.autograd import hooks
        hooks.retain_grad(self)

    def register_hook(self, hook: Any) -> Any:
        from runtime.autograd import hooks
        return hooks.register_hook(self, hook)

    def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        from runtime.autograd import function
        function.backward(self, gradient, retain_graph, create_graph, inputs)

    # -- conversion ----------------------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as a NumPy array; shares memory for CPU tensors."""
        if self._device.type != "cpu":
            if not force:
                raise TypeError(f"can't convert {self._device} tensor to numpy. Use Tensor.cpu() to copy the "
                                "tensor to host memory first.")
            return self._data.get()
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        return self._data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        array = self.numpy(force=True)
        return array if dtype is None else array.astype(dtype)

    def item(self) -> Any:
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item() if self._device.type == "cpu" else self._data.get().item()

    def tolist(self) -> Any:
        return self.numpy(force=True).tolist()

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self._data.size} values is ambiguous")
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        from runtime.formatting import tensor_repr
        return tensor_repr(self)

    __str__ = __repr__
