"""PyTorch's legacy tensor types: `torch.FloatTensor`, `torch.LongTensor`, ..., `torch.cuda.FloatTensor`.

Note [Legacy tensor types]
Old programs and tutorials build tensors with `torch.LongTensor(indexes)` or `torch.FloatTensor(2, 3)`, test
`isinstance(x, torch.FloatTensor)` and convert with `x.type(torch.DoubleTensor)`. In PyTorch these are
classes whose instances are ordinary Tensors; here each is a class made by `_LegacyType` that is never
instantiated: calling it builds a plain Tensor of its dtype and device (sizes give an uninitialised
tensor, a sequence or array gives its values cast to the dtype, a Tensor of the same dtype and device gives
a detached alias of its storage, another Tensor is refused), and `isinstance` asks the tensor's dtype and
device. `Tensor.type(cls)` reads the class's `__legacy_type_name__`, the string `Tensor.type()` returns.
"""

from __future__ import annotations

from typing import Any

from runtime import dtypes, factories
from runtime.device import Device
from runtime.dtypes import DType
from runtime.tensor import Size, Tensor

__all__ = ["CPU_TYPES", "CUDA_TYPES"]


class _LegacyType(type):
    """The metaclass of the legacy tensor types (Note [Legacy tensor types])."""

    dtype: DType
    device_type: str
    __legacy_type_name__: str

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == cls.device_type

    def __subclasscheck__(cls, sub: Any) -> bool:
        return sub is cls

    def __repr__(cls) -> str:
        return f"<class '{cls.__legacy_type_name__}'>"

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:
        where = Device(device) if device is not None else Device(cls.device_type)
        if where.type != cls.device_type:
            raise RuntimeError(f"legacy constructor expects device type: {cls.device_type} but device type: "
                               f"{where.type} was passed")
        if cls.device_type == "cuda":
            from runtime import cuda
            if not cuda.is_available():
                raise TypeError(f"type {cls.__legacy_type_name__} not available: {cuda.unavailable_reason()}")
        if len(args) == 1 and isinstance(args[0], Tensor):
            src = args[0]
            if src.dtype is not cls.dtype or src.device.type != cls.device_type:
                raise TypeError(f"{cls.__legacy_type_name__}(tensor): expected a {cls.dtype} tensor on "
                                f"{cls.device_type}, got {src.dtype} on {src.device}")
            return src.detach()
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return factories.empty(*args, dtype=cls.dtype, device=where) if args else \
                factories.empty(0, dtype=cls.dtype, device=where)
        if len(args) == 1 and isinstance(args[0], Size):
            return factories.empty(*args[0], dtype=cls.dtype, device=where)
        if len(args) == 1 and not isinstance(args[0], str | bytes | float | complex | bool):
            return factories.tensor(args[0], dtype=cls.dtype, device=where)
        raise TypeError(f"{cls.__legacy_type_name__}(): expected sizes (ints), a Size, a sequence of data or a "
                        f"tensor; got ({', '.join(type(a).__name__ for a in args)})")


def _make(dtype: DType, device_type: str) -> _LegacyType:
    name = dtypes.tensor_type_name(dtype, device_type)
    cls = _LegacyType(name.rsplit(".", 1)[1], (), {"dtype": dtype, "device_type": device_type,
                                                   "is_cuda": device_type == "cuda",
                                                   "__legacy_type_name__": name,
                                                   "__module__": name.rsplit(".", 1)[0]})
    return cls


# name -> class, for the package (`G.FloatTensor`) and for `G.cuda` (`G.cuda.FloatTensor`)
CPU_TYPES: dict[str, _LegacyType] = {n: _make(d, "cpu") for d, n in dtypes.TENSOR_TYPE_NAMES.items()}
CUDA_TYPES: dict[str, _LegacyType] = {n: _make(d, "cuda") for d, n in dtypes.TENSOR_TYPE_NAMES.items()}
