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

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from runtime import dtypes, opcall
from runtime.device import CPU, META, Device
from runtime.dispatcher import AUTOGRAD_BIT, CPU_BIT, CUDA_BIT, META_BIT
from runtime.formatting import tensor_repr
from runtime.layout import format_name, format_strides
from runtime.meta_array import MetaArray, no_data
from runtime.storage import Storage, root_array
from runtime.strides import is_contiguous, wrap_dim

_new = object.__new__
_ndarray = np.ndarray
_BACKEND_BITS = CPU_BIT | CUDA_BIT | META_BIT
_NP_TO_DTYPE: dict[Any, dtypes.DType] = {d.np: d for d in dtypes.ALL_DTYPES if d.np is not None}


def _cuda_device(array: Any) -> Device:
    return Device("cuda", array.device.id)


def install_methods(**methods: Any) -> None:
    """Install Tensor methods implemented by a module of an upper layer (Note [Tensor methods from upper layers])."""
    for name, fn in methods.items():
        setattr(Tensor, name, fn)


class Tensor:
    # Note [Tensor methods from upper layers]
    # Methods implemented above the core are installed onto this class by the module that implements
    # them, when it is imported (as generated/_methods.py installs the ops), so that this module imports
    # nothing above it (DESIGN.md section 2): `__getitem__`/`__setitem__` by runtime/indexing.py,
    # `to`/`__dlpack__`/`__dlpack_device__` by runtime/interop.py, `register_hook`/`retain_grad` by
    # runtime/autograd/hooks.py, `backward` by runtime/autograd/function.py, and the legacy constructor
    # `Tensor(2, 3)` and `new_tensor` by runtime/factories.py. runtime/api.py imports
    # all of them, so `import generated` (or `runtime.api`) gives the whole class.
    # Note [Lean tensor construction]
    # The fields every tensor sets, the autograd fields every recorded op reads and writes, and `_base`
    # (which every view sets and every in-place op reads), live in slots; the rest (storage, grad, leaf
    # metadata) are class-level defaults that an instance overrides in its __dict__ when it needs to. So
    # `_wrap`, the hot path of every kernel, sets eight slots and creates no dict, nor does `_view` (a dict
    # made for `_base` alone cost a view as much as its array), nor recording an op's history.
    # `fresh_tensor` (below the class) is the one definition of a new tensor's slots: `_wrap` and `_view`
    # call it (Parameter copies the slots of a tensor made so), and the generated pointwise kernels carry
    # its body, rendered from its source (Note [Generated, not copied, fast paths] in codegen/inline.py).
    """A multi-dimensional array of one dtype on one device, a view (shape, strides, offset) of a Storage, with
    autograd; the ops are its methods (`t.add(u)`, `t + u`)."""
    __slots__ = ("_data", "_dtype", "_device", "_keys", "_requires_grad", "_grad_fn", "_output_nr", "_base",
                 "__dict__", "__weakref__")

    _data: Any
    _dtype: dtypes.DType
    _device: Device
    _keys: int
    _requires_grad: bool
    _grad_fn: Any
    _output_nr: int
    _base: Tensor | None  # the tensor whose memory this view shares; None: not a view
    _storage: Storage | None = None
    _grad: Tensor | None = None
    _leaf_edge: Any = None  # (AccumulateGrad, 0) of a leaf (Note [Leaves and their AccumulateGrad])
    _retains_grad: bool = False
    _wrapped: bool = False  # a 0-d tensor made from a Python number (promotes like the number)

    # -- construction (internal) ---------------------------------------------------------------
    @staticmethod
    def _wrap(array: Any, dtype: dtypes.DType | None = None) -> Tensor:
        """A new tensor over an existing NumPy/CuPy array view (no copy); the hot path of every kernel."""
        if dtype is None:
            dtype = _NP_TO_DTYPE[array.dtype]
        if array.__class__ is _ndarray:
            return fresh_tensor(array, dtype, CPU, CPU_BIT)
        if array.__class__ is MetaArray:  # Note [Meta tensors] (runtime/meta_array.py)
            return fresh_tensor(array, dtype, META, META_BIT)
        return fresh_tensor(array, dtype, _cuda_device(array), CUDA_BIT)

    def _view(self, array: Any) -> Tensor:
        """A tensor over `array`, a view of this tensor's memory: it shares this tensor's Storage."""
        t = fresh_tensor(array, self._dtype, self._device, self._keys & _BACKEND_BITS)
        storage = self._storage
        if storage is not None:
            t._storage = storage  # else resolved through _base (Note [Tensor data is a strided array view])
        base = self._base
        t._base = base if base is not None else self
        return t

    # -- geometry --------------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Any:
        """The shape (a Size), or the size of dimension `dim`."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[wrap_dim(dim, self._data.ndim)]

    def stride(self, dim: int | None = None) -> Any:
        """The strides in elements (a tuple), or the stride of dimension `dim`."""
        item = self._dtype.itemsize
        strides = tuple([s // item for s in self._data.strides])
        if dim is None:
            return strides
        return strides[wrap_dim(dim, len(strides))]

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        """The number of dimensions."""
        return self._data.ndim

    def numel(self) -> int:
        """The number of elements."""
        return int(self._data.size)

    def nelement(self) -> int:
        """The number of elements (same as numel())."""
        return int(self._data.size)

    def ndimension(self) -> int:
        """The number of dimensions (same as dim())."""
        return self._data.ndim

    def element_size(self) -> int:
        """The size of one element in bytes."""
        return self._dtype.itemsize

    def data_ptr(self) -> int:
        """The address of the tensor's first element."""
        if self._device.type != "cuda":  # a meta tensor's address is in a reservation that holds nothing
            return int(self._data.__array_interface__["data"][0])
        return int(self._data.data.ptr)

    def storage_offset(self) -> int:
        """The offset of the first element in the storage, in elements."""
        return (self.data_ptr() - self.storage.data_ptr()) // self._dtype.itemsize

    def is_contiguous(self, memory_format: Any = None) -> bool:
        """Whether the elements are laid out in row-major order without gaps (or in `memory_format`:
        `opgen.channels_last` ...)."""
        if memory_format is None or format_name("is_contiguous", memory_format) == "contiguous_format":
            return is_contiguous(self.shape, self.stride())
        want = format_strides("is_contiguous", memory_format, tuple(self.shape))
        if want is None:
            raise RuntimeError("is_contiguous: preserve_format is not a layout a tensor can be in")
        return all(n == 1 or st == w for n, st, w in zip(self.shape, self.stride(), want, strict=True))

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
        """The Storage this tensor views."""
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

    @property
    def is_meta(self) -> bool:
        return self._device.type == "meta"

    # Devices, layouts and encodings opgen has no tensors of (PyTorch's flags, all False here).
    is_xpu = is_mps = is_xla = is_ipu = is_mtia = is_maia = is_vulkan = is_mkldnn = property(lambda self: False)
    is_quantized = is_sparse = is_sparse_csr = is_nested = property(lambda self: False)

    def is_complex(self) -> bool:
        """Always False: opgen has no complex dtypes."""
        return False  # opgen has no complex dtypes

    def is_conj(self) -> bool:
        """Always False: opgen has no complex dtypes, so no lazily conjugated tensors."""
        return False

    def is_neg(self) -> bool:
        """Always False: opgen keeps no lazy negation bit on tensors."""
        return False

    def is_signed(self) -> bool:
        """Whether the dtype holds negative values (the floating dtypes and the signed integers)."""
        return bool(self._dtype.is_signed)

    def is_same_size(self, other: Tensor) -> bool:
        """Whether `other` has the same shape as this tensor."""
        return tuple(self.shape) == tuple(other.shape)

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating dtype (float16, bfloat16, float32, float64)."""
        return self._dtype.is_floating_point

    def get_device(self) -> int:
        """The CUDA device index of the tensor, or -1 for a CPU tensor."""
        return -1 if self._device.type == "cpu" else int(self._device.index or 0)

    # -- autograd surface (the engine is runtime.autograd) -----------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set whether autograd records operations on this (leaf) tensor; returns self."""
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
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value._dtype is not self._dtype:
                raise RuntimeError(f"assigned grad has data of a different type: the gradient is {value._dtype} "
                                   f"and the tensor {self._dtype}")
            if value._device != self._device:
                raise RuntimeError(f"assigned grad has data located on a different device: the gradient is on "
                                   f"{value._device} and the tensor on {self._device}")
            if value.shape != self.shape:
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

    @data.setter
    def data(self, value: Tensor) -> None:
        """`t.data = u`: `t` takes `u`'s memory, shape, dtype and device and keeps its identity, its autograd
        flags, `.grad` and hooks; no history is recorded (PyTorch's `.data` assignment)."""
        if not isinstance(value, Tensor):
            raise TypeError(f"Tensor.data can only be set to a Tensor, not {type(value).__name__}")
        if self._requires_grad and not value._dtype.is_floating_point:
            raise RuntimeError(f"Tensor.data: a tensor that requires grad cannot hold {value._dtype} data")
        self._data, self._storage, self._base = value._data, value.storage, None
        self._dtype = value._dtype
        self._device = value._device
        self._keys = (self._keys & ~_BACKEND_BITS) | (value._keys & _BACKEND_BITS)
        edge = self._leaf_edge
        if edge is not None:  # the edge into its AccumulateGrad (which holds its hooks) records shape and dtype
            self._leaf_edge = (edge[0], edge[1], tuple(value._data.shape), value._dtype, value._device)

    def detach(self) -> Tensor:
        """A new tensor sharing this one's data and storage, outside the autograd graph."""
        t = Tensor._wrap(self._data, self._dtype)
        t._storage = self.storage  # shares the version counter; not a view (no _base), as in PyTorch
        return t

    def detach_(self) -> Tensor:
        """Detach this tensor from the autograd graph in place (no grad_fn, requires_grad False); returns self."""
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        self._keys &= ~AUTOGRAD_BIT
        return self

    # -- hand-written methods over the ops (properties, indexing; the varargs ones are generated) -------
    def view_as(self, other: Tensor) -> Tensor:
        """A view of this tensor with other's shape."""
        return opcall.ops.view(self, other.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        """This tensor reshaped to other's shape."""
        return opcall.ops.reshape(self, other.shape)

    @property
    def T(self) -> Tensor:
        return opcall.ops.permute(self, tuple(range(self._data.ndim - 1, -1, -1)))

    @property
    def mT(self) -> Tensor:
        if self._data.ndim < 2:
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got "
                               f"{self._data.ndim}-D tensor.")
        return opcall.ops.transpose(self, -2, -1)

    @property
    def mH(self) -> Tensor:
        """The conjugate transpose of the last two dims: mT for the real dtypes opgen has."""
        return self.mT

    @property
    def H(self) -> Tensor:
        if self._data.ndim not in (0, 2):
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self._data.ndim}-D tensor.")
        return self.T

    def cpu(self) -> Tensor:
        """This tensor on the CPU (self when it is there already)."""
        return self.to("cpu")

    def cuda(self, device: Any = None, non_blocking: bool = False) -> Tensor:
        """This tensor on a CUDA device (the current one, or `device`); self when it is there already."""
        return self.to("cuda" if device is None else device if not isinstance(device, int) else f"cuda:{device}")

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:
        """With no argument PyTorch's type string ("torch.FloatTensor"); else a copy in `dtype`, which may
        also be such a string ("torch.cuda.LongTensor" moves it too)."""
        if dtype is None:
            return dtypes.tensor_type_name(self._dtype, self._device.type)
        dtype = getattr(dtype, "__legacy_type_name__", dtype)  # G.FloatTensor (Note [Legacy tensor types])
        if isinstance(dtype, str):
            parsed = dtypes.parse_tensor_type_name(dtype)
            if parsed is not None:
                return self.to(device=parsed[1], dtype=parsed[0], non_blocking=non_blocking)
        return self.to(dtype, non_blocking=non_blocking)

    def type_as(self, other: Tensor) -> Tensor:
        """This tensor in `other`'s dtype (itself when it already has it)."""
        return self.to(other.dtype)

    def float(self, memory_format: Any = None) -> Tensor:
        """This tensor as float32 (self when it is float32 already)."""
        return self.to(dtypes.float32)

    def double(self, memory_format: Any = None) -> Tensor:
        """This tensor as float64 (self when it is float64 already)."""
        return self.to(dtypes.float64)

    def half(self, memory_format: Any = None) -> Tensor:
        """This tensor as float16 (self when it is float16 already)."""
        return self.to(dtypes.float16)

    def int(self, memory_format: Any = None) -> Tensor:
        """This tensor as int32 (self when it is int32 already)."""
        return self.to(dtypes.int32)

    def long(self, memory_format: Any = None) -> Tensor:
        """This tensor as int64 (self when it is int64 already)."""
        return self.to(dtypes.int64)

    def short(self, memory_format: Any = None) -> Tensor:
        """This tensor as int16 (self when it is int16 already)."""
        return self.to(dtypes.int16)

    def char(self, memory_format: Any = None) -> Tensor:
        """This tensor as int8 (self when it is int8 already)."""
        return self.to(dtypes.int8)

    def byte(self, memory_format: Any = None) -> Tensor:
        """This tensor as uint8 (self when it is uint8 already)."""
        return self.to(dtypes.uint8)

    def bool(self, memory_format: Any = None) -> Tensor:
        """This tensor as bool (self when it is bool already)."""
        return self.to(dtypes.bool_)

    def is_set_to(self, other: Tensor) -> bool:
        """Whether both tensors view the same storage with the same offset, shape and strides."""
        return (self.storage is other.storage and self.storage_offset() == other.storage_offset()
                and self.shape == other.shape and self.stride() == other.stride())

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        if self._device.type != "cuda":
            raise AttributeError(f"can't get __cuda_array_interface__ on a non-CUDA tensor (device {self._device})"
                                 ". Use tensor.__array_interface__ or tensor.numpy() instead.")
        if self._requires_grad:
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad. "
                               "If gradients aren't required, use var.detach() to get Variable that doesn't "
                               "require grad.")
        if self._dtype.np is None:
            raise TypeError(f"can't get __cuda_array_interface__ of a {self._dtype} tensor: the interface has no "
                            "bfloat16 type (its data would be read as uint16); convert it first, e.g. "
                            "tensor.float()")
        return self._data.__cuda_array_interface__

    if TYPE_CHECKING:  # installed by upper layers (Note [Tensor methods from upper layers]); declared for type checkers
        def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None,
                     create_graph: bool = False, inputs: Any = None) -> None: ...
        def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> Any: ...
        def retain_grad(self) -> None: ...
        def to(self, *args: Any, **kwargs: Any) -> Tensor: ...
        def __getitem__(self, index: Any) -> Tensor: ...
        def __setitem__(self, index: Any, value: Any) -> None: ...

    # -- conversion ----------------------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as a NumPy array; shares memory for CPU tensors."""
        if self._dtype.np is None:  # bfloat16 (CUDA only): Note [bfloat16 on the CUDA backend]
            raise TypeError(f"Got unsupported ScalarType BFloat16: NumPy has no {self._dtype}; convert the tensor "
                            "first, e.g. tensor.float()")
        if self._device.type == "meta":
            no_data("numpy()")
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
        if dtype is not None and np.dtype(dtype) != array.dtype:
            if copy is False:
                raise ValueError(f"can't convert a {self._dtype.name} tensor to {np.dtype(dtype)} without a copy")
            return array.astype(dtype)
        return array.copy() if copy else array

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if self._device.type == "meta":
            no_data("item()")
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        if self._dtype.np is None:  # bfloat16: its value, exactly, through float32
            return self.detach().float().item()
        return self._data.reshape(()).item() if self._device.type == "cpu" else self._data.get().item()

    def tolist(self) -> Any:
        """The tensor as nested Python lists of Python numbers (a number for a 0-d tensor)."""
        if self._device.type == "meta":
            no_data("tolist()")
        if self._dtype.np is None:  # bfloat16: its values, exactly, through float32
            return self.detach().float().tolist()
        return self.numpy(force=True).tolist()

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self) -> Any:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self._data.size} values is ambiguous")
        return bool(self.item())

    def __float__(self) -> float:
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return float(self.item())

    def __int__(self) -> int:
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return int(self.item())

    def __index__(self) -> int:
        if self._dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        """`f"{t:.3f}"` formats a 0-d tensor's value; an empty spec gives `str(t)`, as PyTorch's."""
        if self._data.ndim == 0:
            return format(self.item(), spec)
        if not spec:
            return str(self)
        raise TypeError("unsupported format string passed to Tensor.__format__")



def fresh_tensor(data: Any, dtype: dtypes.DType, device: Device, keys: int) -> Tensor:
    """A new tensor over `data` that requires no grad (Note [Lean tensor construction]): the one definition
    of the slots every tensor sets. Generated kernels inline this body (codegen/inline.py): keep it a plain
    sequence of stores ending in `return`, naming only its parameters, `t`, `_new` and `Tensor`."""
    t = _new(Tensor)
    t._data = data
    t._dtype = dtype
    t._device = device
    t._keys = keys
    t._requires_grad = False
    t._grad_fn = None
    t._output_nr = 0
    t._base = None
    return t

class Size(tuple):
    """A tensor's shape: a tuple of ints printed as `opgen.Size([2, 3])` (PyTorch's `torch.Size`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"opgen.Size({list(self)})"

    __str__ = __repr__

    def __getitem__(self, key: Any) -> Any:
        item = tuple.__getitem__(self, key)
        return Size(item) if isinstance(key, slice) else item

    def __add__(self, other: Any) -> Any:
        return Size(tuple.__add__(self, other)) if isinstance(other, tuple) else NotImplemented

    def __radd__(self, other: Any) -> Any:
        return Size(tuple.__add__(tuple(other), self)) if isinstance(other, tuple) else NotImplemented

    def __mul__(self, n: Any) -> Size:
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def numel(self) -> int:
        """The number of elements of a tensor of this shape."""
        n = 1
        for d in self:
            n *= d
        return n


def is_tensor(obj: Any) -> bool:
    """Whether `obj` is an opgen tensor (PyTorch's `torch.is_tensor`)."""
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    """The number of elements of `input` (PyTorch's `torch.numel`)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"numel(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.numel()


def is_floating_point(input: Tensor) -> bool:
    """Whether `input`'s dtype is a floating dtype."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_floating_point(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.is_floating_point()


def is_nonzero(input: Tensor) -> bool:
    """Whether a one-element tensor is nonzero (PyTorch's `torch.is_nonzero`; more elements raise)."""
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input)
