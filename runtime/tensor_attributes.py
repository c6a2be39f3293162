"""Tensor attributes of PyTorch's that are not operators: sizes in bytes, layout and memory flags, dtype
conversions, the real/imaginary parts of real tensors, the legacy `new`, element-wise Python functions
(`apply_`, `map_`, `map2_`), `dim_order`, `as_subclass`, and the answers PyTorch gives on a dense strided
tensor to the sparse and quantized queries and to the functions it has removed.

runtime/api.py imports this module, which installs the methods on Tensor (Note [Tensor methods from upper
layers] in runtime/tensor.py); the storage-changing ones (`resize_`, `set_`) are in runtime/tensor_storage.py.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from runtime import dtypes, opcall
from runtime.layout import strided
from runtime.tensor import Size, Tensor, install_methods, is_nonzero


# -- sizes, layout, flags ----------------------------------------------------------------------------------
def _nbytes(self: Tensor) -> int:
    """The bytes of the tensor's elements (numel() * itemsize; not of its storage)."""
    return self.numel() * self._dtype.itemsize


def _itemsize(self: Tensor) -> int:
    """The bytes of one element (element_size())."""
    return self._dtype.itemsize


def _layout(self: Tensor) -> Any:
    """The memory layout: `opgen.strided` (opgen has no sparse or mkldnn tensors)."""
    return strided


def _retains_grad(self: Tensor) -> bool:
    """Whether a non-leaf tensor keeps its .grad (after retain_grad())."""
    return bool(self._retains_grad)


def _grad_dtype(self: Tensor) -> Any:
    """The dtype a gradient of this tensor must have: the tensor's own (assigned grads are checked)."""
    return self._dtype


def _volatile(self: Tensor) -> bool:
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


def is_inference(self: Tensor) -> bool:
    """False: opgen makes no inference tensors (inference_mode works as no_grad)."""
    return False


def is_distributed(self: Tensor) -> bool:
    """False, as in PyTorch for every dense tensor."""
    return False


def is_shared(self: Tensor) -> bool:
    """Whether the memory can be shared with other processes as it is: CUDA memory is, opgen's CPU memory
    is not (opgen has no share_memory_)."""
    return self._device.type == "cuda"


def const_data_ptr(self: Tensor) -> int:
    """The address of the first element (data_ptr(), for reading)."""
    return self.data_ptr()


def _is_nonzero(self: Tensor) -> bool:
    """Whether a one-element tensor is nonzero; an empty or larger tensor raises."""
    return is_nonzero(self)


def is_pinned(self: Tensor, device: Any = None) -> bool:
    """Whether a CPU tensor's memory is page-locked (made by pin_memory()); always False without CUDA."""
    from runtime import cuda
    if self._device.type != "cpu" or not cuda.is_available():
        return False
    from runtime.cuda.host_allocator import get_host_allocator
    return get_host_allocator().is_pinned(self.data_ptr())


def pin_memory(self: Tensor, device: Any = None) -> Tensor:
    """A copy of this CPU tensor in page-locked memory (itself when it is pinned already); needs CUDA."""
    from runtime import cuda
    if not cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if self._device.type != "cpu":
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    if is_pinned(self):
        return self
    from runtime.cuda.host_allocator import pin_memory as pinned_copy
    return Tensor._wrap(pinned_copy(self._data), self._dtype)


# -- dtypes ----------------------------------------------------------------------------------------------
def bfloat16(self: Tensor, memory_format: Any = None) -> Tensor:
    """This tensor as bfloat16 (self when it is already); the CUDA backend has bfloat16, the CPU one refuses."""
    return self.to(dtypes.bfloat16)


def _no_complex(name: str, dtype: str) -> Callable[..., Tensor]:
    def method(self: Tensor, memory_format: Any = None) -> Tensor:
        raise TypeError(f"Tensor.{name}(): opgen has no complex dtypes ({dtype}); complex tensors are not "
                        "supported")
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Refused: PyTorch converts to {dtype}, a complex dtype opgen does not have."
    return method


def _real(self: Tensor) -> Tensor:
    """The real part: the tensor itself, as every opgen dtype is real."""
    return self


def _imag(self: Tensor) -> Tensor:
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


# -- construction ------------------------------------------------------------------------------------------
def new(self: Tensor, *args: Any, device: Any = None) -> Tensor:
    """PyTorch's legacy `x.new(...)`: like the `Tensor(...)` constructor (sizes, a Size, data or nothing), in
    this tensor's dtype and on its device (or `device`)."""
    device = self._device if device is None else device
    G = opcall.api
    if len(args) == 1 and isinstance(args[0], Tensor):
        source = args[0]
        if source._dtype is not self._dtype or source._device != self._device:
            raise TypeError(f"expected {self.type()} (got {source.type()})")
        return source.detach()  # shares the data, as PyTorch's x.new(tensor)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return G.empty(*args, dtype=self._dtype, device=device) if args else G.empty(0, dtype=self._dtype,
                                                                                      device=device)
    if len(args) == 1 and isinstance(args[0], Size):  # a Size is sizes; any other tuple is data
        return G.empty(*args[0], dtype=self._dtype, device=device)
    if len(args) == 1 and not isinstance(args[0], str | bytes | float | bool):
        return G.tensor(args[0], dtype=self._dtype, device=device)
    raise TypeError("new(): expected sizes (ints), a Size, a tensor or one sequence of data; got "
                    f"({', '.join(type(a).__name__ for a in args)})")


def as_subclass(self: Tensor, cls: type) -> Tensor:
    """A tensor of class `cls` (a subclass of Tensor) over this tensor's data, attached to its autograd
    graph (an alias: gradients flow back to this tensor)."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass(): cls must be a subclass of Tensor, got {cls!r}")
    alias = opcall.ops.view(self, tuple(self.shape))
    alias.__class__ = cls
    return alias


def resize(self: Tensor, *sizes: Any) -> Tensor:
    """Deprecated out-of-place resize: this tensor's elements in another shape of the same number of elements
    (differentiable, as reshape)."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    shape = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], tuple | list) else tuple(sizes)
    count = 1
    for n in shape:
        count *= int(n)
    if count != self.numel():
        raise RuntimeError(f"requested resize to {'x'.join(map(str, shape))} ({count} elements in total), but the "
                           f"given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} "
                           "elements). autograd's resize can only change the shape of a given tensor, while "
                           "preserving the number of elements.")
    return opcall.ops.reshape(self.contiguous(), shape)


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """Deprecated out-of-place resize to `tensor`'s shape (same number of elements)."""
    return resize(self, tuple(tensor.shape))


def module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """What nn.Module.load_state_dict swaps in for this parameter or buffer: `other` detached with
    assign=True, else this tensor with other's values copied in, detached (a new object either way)."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


# -- element-wise Python functions (CPU) -----------------------------------------------------------------
def _python_map(self: Tensor, name: str, fn: Callable[..., Any], *others: Tensor) -> Tensor:
    if self._device.type != "cpu":
        raise TypeError(f"{name} is only implemented on CPU tensors")
    if self._requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() "
                           "instead.")
    if any(o._device.type != "cpu" for o in others):
        raise TypeError(f"{name}: the other tensors must be CPU tensors too")
    columns = [self.reshape(-1).tolist()] + [o.expand_as(self).reshape(-1).tolist() for o in others]
    values = [fn(*items) for items in zip(*columns, strict=True)]
    with opcall.api.no_grad():
        self.copy_(opcall.api.tensor(values, dtype=self._dtype).reshape(self.shape))
    return self


def apply_(self: Tensor, callable: Callable[[Any], Any]) -> Tensor:
    """Replace each element x by callable(x) (a Python function, CPU only; slow); returns self."""
    return _python_map(self, "apply_", callable)


def map_(self: Tensor, tensor: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:
    """Replace each element x by callable(x, y), y the element of `tensor` (broadcast to self); returns self."""
    return _python_map(self, "map_", callable, tensor)


def map2_(self: Tensor, x: Tensor, y: Tensor, callable: Callable[[Any, Any, Any], Any]) -> Tensor:
    """Replace each element s by callable(s, a, b), a and b the elements of `x` and `y`; returns self."""
    return _python_map(self, "map2_", callable, x, y)


# -- memory order ------------------------------------------------------------------------------------------
# Note [dim_order]
# PyTorch's answer: a contiguous tensor is (0, 1, ..., n-1), a channels-last 4-D one (0, 2, 3, 1); any other
# layout is an insertion sort of the dims, innermost first, by stride: a dim of stride 0 compares with
# nothing, equal strides order by size (the larger dim outside), and the result is read outermost first.
# With ambiguity_check, a layout with a size-1 dim or two neighbouring equal strides, or whose sorted
# neighbours are not strictly ordered, has no unique order and is refused.
def dim_order(self: Tensor, *, ambiguity_check: bool = False) -> tuple[int, ...]:
    """The dims from outermost to innermost in memory (see Note [dim_order])."""
    sizes, strides = tuple(self.shape), self.stride()
    ndim = len(sizes)
    if ambiguity_check and (any(s == 1 for s in sizes)
                            or any(a == b for a, b in zip(strides, strides[1:], strict=False))):
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                           "memory formats.")
    if ndim <= 1:
        return tuple(range(ndim))
    contiguous, channels_last = self.is_contiguous(), _is_channels_last(sizes, strides)
    if contiguous != channels_last:
        return tuple(range(ndim)) if contiguous else (0, *range(2, ndim), 1)
    inner_first = list(range(ndim - 1, -1, -1))
    for i in range(1, ndim):
        moving = i
        for k in range(i - 1, -1, -1):
            order = _stride_order(inner_first[k], inner_first[moving], sizes, strides)
            if order > 0:
                inner_first[k], inner_first[moving] = inner_first[moving], inner_first[k]
                moving = k
            elif order < 0:
                break
    if ambiguity_check and any(_stride_order(a, b, sizes, strides) != -1
                               for a, b in zip(inner_first, inner_first[1:], strict=False)):
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(reversed(inner_first))


def _at_least(a: int, b: int) -> bool:
    return b == 0 or (a != 0 and a >= b)


def _stride_order(a: int, b: int, sizes: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """-1: dim a lies inside dim b; 1: outside; 0: their strides do not say."""
    if strides[a] == 0 or strides[b] == 0:
        return 0
    if strides[a] == strides[b]:
        return 0 if _at_least(sizes[b], sizes[a]) else 1
    return -1 if strides[b] > strides[a] else 1


def _is_channels_last(sizes: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    if len(sizes) != 4:
        return False
    expected = 1
    for d in (1, 3, 2, 0):  # channels innermost, then width, height, batch
        if sizes[d] != 1 and strides[d] != expected:
            return False
        expected *= max(sizes[d], 1)
    return True


# -- sparse and quantized queries on a dense strided tensor (PyTorch's answers) ---------------------------
def to_dense(self: Tensor, dtype: Any = None, *, masked_grad: Any = None) -> Tensor:
    """The tensor itself (it is dense), or a copy in `dtype`."""
    return self if dtype is None else self.to(dtype)


def dense_dim(self: Tensor) -> int:
    """The number of dense dims: all of them for a strided tensor."""
    return self.dim()


def sparse_dim(self: Tensor) -> int:
    """The number of sparse dims: 0 for a strided tensor."""
    return 0


def _sparse_only(name: str, layout: str) -> Callable[..., Any]:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{name} expected {layout} layout but got Strided")
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Refused, as in PyTorch: {name} needs a {layout} tensor and opgen's tensors are strided."
    return method


def _quantized_only(name: str) -> Callable[..., Any]:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the "
                                  f"'{self._device.type.upper()}' backend: it needs a quantized tensor, which "
                                  "opgen does not have")
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Refused, as in PyTorch for a tensor that is not quantized: {name} reads quantizer state."
    return method


_SPARSE = {"is_coalesced": "sparse coordinate tensor", "coalesce": "sparse coordinate tensor",
           "indices": "sparse coordinate tensor", "values": "sparse tensor",
           "crow_indices": "sparse row compressed tensor", "col_indices": "sparse row compressed tensor",
           "ccol_indices": "sparse column compressed tensor", "row_indices": "sparse column compressed tensor"}
_QUANTIZED = ("int_repr", "q_scale", "q_zero_point", "q_per_channel_scales", "q_per_channel_zero_points",
              "q_per_channel_axis", "qscheme")


# -- functions PyTorch has removed but still names (they raise) -------------------------------------------
def _removed(name: str, instead: str) -> Callable[..., Any]:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"This function was deprecated since version 1.9 and is now removed. Use {instead} "
                           "instead.")
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Removed from PyTorch (1.9): raises; use {instead}."
    return method


def reinforce(self: Tensor, reward: Any) -> None:
    """Removed from PyTorch: raises."""
    raise RuntimeError("reinforce() was removed. Use torch.distributions instead.")


def _no_device(name: str, error: type[Exception], message: str) -> Callable[..., Any]:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        raise error(message)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Refused: opgen has no {name} devices (PyTorch built without them refuses the same way)."
    return method


install_methods(
    nbytes=property(_nbytes), itemsize=property(_itemsize), layout=property(_layout),
    retains_grad=property(_retains_grad), grad_dtype=property(_grad_dtype), volatile=property(_volatile),
    real=property(_real), imag=property(_imag),
    is_inference=is_inference, is_distributed=is_distributed, is_shared=is_shared, const_data_ptr=const_data_ptr,
    is_nonzero=_is_nonzero, is_pinned=is_pinned, pin_memory=pin_memory,
    bfloat16=bfloat16, cdouble=_no_complex("cdouble", "complex128"), cfloat=_no_complex("cfloat", "complex64"),
    chalf=_no_complex("chalf", "complex32"),
    new=new, resize=resize, resize_as=resize_as, module_load=module_load, as_subclass=as_subclass,
    apply_=apply_, map_=map_, map2_=map2_, dim_order=dim_order,
    to_dense=to_dense, dense_dim=dense_dim, sparse_dim=sparse_dim,
    **{name: _sparse_only(name, layout) for name, layout in _SPARSE.items()},
    **{name: _quantized_only(name) for name in _QUANTIZED},
    eig=_removed("eig", "torch.linalg.eig"), symeig=_removed("symeig", "torch.linalg.eigh"),
    lstsq=_removed("lstsq", "torch.linalg.lstsq"), solve=_removed("solve", "torch.linalg.solve"),
    reinforce=reinforce,
    xpu=_no_device("xpu", AssertionError, "Torch not compiled with XPU enabled (opgen has no XPU devices)"),
    mtia=_no_device("mtia", AssertionError, "Torch not compiled with MTIA enabled (opgen has no MTIA devices)"),
    ipu=_no_device("ipu", RuntimeError, "opgen is not linked with support for ipu devices"),
)
