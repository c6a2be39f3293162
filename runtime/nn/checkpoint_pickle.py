"""The pickle half of PyTorch's checkpoint format: what `data.pkl` holds and how it is read back.

Note [Checkpoints in PyTorch's format]
A checkpoint is a zip archive (runtime/nn/checkpoint_archive.py) whose record `data.pkl` is a pickle
(protocol 2 by default) of the saved object, in which every tensor is written as PyTorch writes it:
    torch._utils._rebuild_tensor_v2(STORAGE, storage_offset, size, stride, requires_grad, OrderedDict())
where STORAGE is a persistent id `("storage", torch.<Type>Storage, key, location, numel)`: the storage's
bytes are the archive record `data/<key>`, `location` is "cpu" or "cuda:N", `numel` counts elements of the
storage's dtype (bytes for `torch.storage.UntypedStorage`, which `_rebuild_tensor_v3` pairs with a dtype).
A Parameter is `torch._utils._rebuild_parameter(tensor, requires_grad, OrderedDict())`; dtypes, devices and
shapes are the globals `torch.float32`, `torch.device`, `torch.Size`. opgen writes those names (without
importing torch) and reads them as its own objects, so a state_dict passes between opgen and PyTorch both
ways. Anything else (a whole Module, an optimizer's state) pickles with the names of opgen's classes.

Loading with `weights_only=True` (the default) unpickles through an allow-list: `find_class` is the only
way a pickle reaches a callable or class, and it answers only the names above (tensors, storages, dtypes,
devices, Size), `collections.OrderedDict`, a few builtin types and what the user allowed with
`add_safe_globals`; anything else is an UnpicklingError naming the global, so loading a file runs none of
its code. The rebuild functions check every argument (types, non-negative strides, the view inside its
storage) before making a view, so a crafted file cannot read outside the memory it brought.
"""

from __future__ import annotations

import codecs
import collections
import contextlib
import io
import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from runtime import dtypes
from runtime.device import Device
from runtime.kernels.copy import move
from runtime.nn.parameter import Parameter
from runtime.storage import Storage
from runtime.strides import contiguous_strides
from runtime.tensor import Size, Tensor

DEFAULT_PROTOCOL = 2  # PyTorch's: files stay readable by every Python 3


class CheckpointError(RuntimeError):
    """A checkpoint that is not well formed (truncated, corrupted, or not a checkpoint)."""


class UnsafeGlobalError(pickle.UnpicklingError):
    """`load(weights_only=True)` met a global outside the allow-list."""


class _Name:
    """A global written by name only (`torch.FloatStorage`): opgen need not be able to import it."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: Any) -> Any:  # the pickler writes only callables as a REDUCE's function
        raise TypeError(f"{self.module}.{self.name} is a name written into a checkpoint, not callable here")


STORAGE_NAMES: dict[dtypes.DType, str] = {
    d: n.replace("Tensor", "Storage") for d, n in dtypes.TENSOR_TYPE_NAMES.items()}
_DTYPE_BY_STORAGE = {n: d for d, n in STORAGE_NAMES.items()}
_UNTYPED = None  # the dtype a `torch.UntypedStorage` stands for: bytes, typed later by _rebuild_tensor_v3


class _StorageType:
    """What `torch.<X>Storage` unpickles to: the dtype its records hold (None: untyped bytes)."""

    __slots__ = ("dtype", "name")

    def __init__(self, dtype: dtypes.DType | None, name: str) -> None:
        self.dtype, self.name = dtype, name


# -- writing -------------------------------------------------------------------------------------------

class StorageRecord:
    """One storage to write as `data/<key>`: `region` (a 1-D uint8 array, CPU or device) holds its bytes."""

    __slots__ = ("key", "dtype", "location", "region")

    def __init__(self, key: str, dtype: dtypes.DType, location: str, region: Any) -> None:
        self.key, self.dtype, self.location, self.region = key, dtype, location, region

    @property
    def numel(self) -> int:
        return int(self.region.nbytes) // self.dtype.itemsize

    def host_bytes(self) -> memoryview:
        host = move(self.region, Device("cpu"))
        return memoryview(np.ascontiguousarray(host)).cast("B")


def _location(device: Device) -> str:
    return "cpu" if device.type == "cpu" else f"cuda:{device.index or 0}"


class CheckpointPickler(pickle._Pickler):
    """Pickles an object with tensors as PyTorch does (Note [Checkpoints in PyTorch's format]); the
    storages met are in `records`, in order. The pure-Python pickler, because only it lets a global be
    written by name without importing its module."""

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file: io.BufferedIOBase, protocol: int = DEFAULT_PROTOCOL) -> None:
        super().__init__(file, protocol=protocol)
        self.records: list[StorageRecord] = []
        # storage -> [(first byte, end byte, record)] of the regions written so far
        self._regions: dict[int, list[tuple[int, int, StorageRecord]]] = {}
        self._storages: list[Storage] = []  # keeps each id() above unique while pickling
        self._names: dict[tuple[str, str], _Name] = {}

    def _name(self, module: str, name: str) -> _Name:
        key = (module, name)
        if key not in self._names:
            self._names[key] = _Name(module, name)
        return self._names[key]

    def _save_name(self, obj: _Name) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    dispatch[_Name] = _save_name

    def save(self, obj: Any, save_persistent_id: bool = True) -> None:
        if type(obj) is dtypes.DType:
            obj = self._name("torch", obj.name)
        super().save(obj, save_persistent_id)

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is not StorageRecord:
            return None
        return ("storage", self._name("torch", STORAGE_NAMES[obj.dtype]), obj.key, obj.location, obj.numel)

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            if isinstance(obj, Parameter):
                return (self._name("torch._utils", "_rebuild_parameter"),
                        (obj.detach(), obj.requires_grad, OrderedDict()))
            return self._reduce_tensor(obj)
        if type(obj) is Device:
            return (self._name("torch", "device"), (str(obj),))
        if type(obj) is Size:
            return (self._name("torch", "Size"), (tuple(obj),))
        return NotImplemented

    def _reduce_tensor(self, t: Tensor) -> tuple[Any, ...]:
        if t.device.type == "meta":
            raise TypeError("cannot save a tensor on the meta device: it has no data")
        record, offset, stride = self._record(t)
        args = (record, offset, tuple(t.shape), stride, t.requires_grad, OrderedDict())
        return (self._name("torch._utils", "_rebuild_tensor_v2"), args)

    def _record(self, t: Tensor) -> tuple[StorageRecord, int, tuple[int, ...]]:
        """The record holding `t`'s elements, `t`'s offset in it and its strides (elements).

        A record holds the bytes from `t`'s first to its last element (not the whole allocation, whose
        padding was never written); a later tensor inside a region already written shares its record,
        so views and tied weights load sharing memory as they were."""
        item = t.dtype.itemsize
        byte_strides = t._data.strides
        storage = t.storage
        root = storage.data
        start = t.data_ptr() - storage.data_ptr()
        usable = (t.numel() > 0 and root.flags.c_contiguous and start >= 0 and start % item == 0
                  and all(s >= 0 and s % item == 0 for s in byte_strides))
        if not usable:  # empty, or a layout PyTorch has no word for (negative strides): a compact host copy
            host = np.ascontiguousarray(move(t._data, Device("cpu"))).reshape(-1).view(np.uint8)
            record = StorageRecord(str(len(self.records)), t.dtype, _location(t.device), host)
            self.records.append(record)
            return record, 0, tuple(contiguous_strides(tuple(t.shape)))
        stride = tuple(s // item for s in byte_strides)
        end = start + item * (1 + sum((n - 1) * s for n, s in zip(t.shape, stride, strict=True)))
        for first, last, record in self._regions.get(id(storage), ()):
            if record.dtype is t.dtype and first <= start and end <= last and (start - first) % item == 0:
                return record, (start - first) // item, stride
        return self._new_record(t, storage, start, end - start), 0, stride

    def _new_record(self, t: Tensor, storage: Storage, start: int, nbytes: int) -> StorageRecord:
        flat = storage.data.reshape(-1).view(np.uint8)
        record = StorageRecord(str(len(self.records)), t.dtype, _location(t.device), flat[start:start + nbytes])
        self.records.append(record)
        self._regions.setdefault(id(storage), []).append((start, start + nbytes, record))
        self._storages.append(storage)
        return record


# -- reading ---------------------------------------------------------------------------------------------

class LoadedStorage:
    """A storage read from a checkpoint and placed on its device: `data` is a 1-D uint8 array."""

    __slots__ = ("data", "dtype", "_typed")

    def __init__(self, data: Any, dtype: dtypes.DType | None) -> None:
        self.data, self.dtype = data, dtype
        self._typed: dict[dtypes.DType, tuple[Any, Storage]] = {}

    def typed(self, dtype: dtypes.DType) -> tuple[Any, Storage]:
        """The storage's bytes as a 1-D array of `dtype`, and the one runtime Storage its tensors share."""
        if dtype not in self._typed:
            if self.data.nbytes % dtype.itemsize:
                raise CheckpointError(f"a storage of {self.data.nbytes} bytes does not hold whole {dtype.name} "
                                      "elements")
            on_cpu = isinstance(self.data, np.ndarray) and self.data.__class__ is np.ndarray
            if dtype is dtypes.bfloat16 and on_cpu:
                raise CheckpointError("the checkpoint holds bfloat16 tensors, which opgen has on CUDA only: "
                                      "load it with map_location='cuda'")
            array = self.data.view(np.uint16 if dtype.np is None else dtype.np)  # bfloat16's bits: uint16
            device = Device("cpu") if on_cpu else Device("cuda", int(array.device.id))
            self._typed[dtype] = (array, Storage(array, device))
        return self._typed[dtype]


def _check_ints(value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, tuple | list) or not all(type(v) is int and v >= 0 for v in value):
        raise CheckpointError(f"a tensor's {what} must be a tuple of non-negative ints, got {value!r}")
    return tuple(value)


def _view(storage: Any, offset: Any, size: Any, stride: Any, dtype: dtypes.DType) -> Tensor:
    """A tensor viewing `storage` (checked: every element lies inside it)."""
    if type(storage) is not LoadedStorage:
        raise CheckpointError(f"a tensor must be built on a storage, got {type(storage).__name__}")
    shape, strides = _check_ints(size, "size"), _check_ints(stride, "stride")
    if len(shape) != len(strides) or type(offset) is not int or offset < 0:
        raise CheckpointError(f"tensor geometry size={shape} stride={strides} offset={offset!r} is inconsistent")
    array, shared = storage.typed(dtype)
    if 0 not in shape:
        last = offset + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))
        if last >= array.shape[0]:
            raise CheckpointError(f"a tensor of size {list(shape)}, stride {list(strides)} at offset {offset} "
                                  f"reaches past its storage of {array.shape[0]} elements")
    else:
        offset, strides = 0, (0,) * len(shape)
    item = array.itemsize
    if isinstance(array, np.ndarray):
        view = np.lib.stride_tricks.as_strided(array[offset:], shape, tuple(s * item for s in strides), subok=True)
    else:
        import cupy
        view = cupy.lib.stride_tricks.as_strided(array[offset:], shape, tuple(s * item for s in strides))
    t = Tensor._wrap(view, dtype)
    t._storage = shared  # tensors of one storage share memory and version counter, not views (_base)
    return t


def _set_requires_grad(t: Tensor, requires_grad: Any) -> Tensor:
    if type(requires_grad) is not bool:
        raise CheckpointError(f"requires_grad must be a bool, got {requires_grad!r}")
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v2(storage: Any, offset: Any, size: Any, stride: Any, requires_grad: Any = False,
                       hooks: Any = None, metadata: Any = None) -> Tensor:
    if type(storage) is LoadedStorage and storage.dtype is None:
        raise CheckpointError("an untyped storage needs _rebuild_tensor_v3, which names its dtype")
    dtype = storage.dtype if type(storage) is LoadedStorage else dtypes.float32
    return _set_requires_grad(_view(storage, offset, size, stride, dtype), requires_grad)


def _rebuild_tensor_v3(storage: Any, offset: Any, size: Any, stride: Any, requires_grad: Any, hooks: Any,
                       dtype: Any, metadata: Any = None) -> Tensor:
    if type(dtype) is not dtypes.DType:
        raise CheckpointError(f"_rebuild_tensor_v3 needs a dtype, got {dtype!r}")
    return _set_requires_grad(_view(storage, offset, size, stride, dtype), requires_grad)


def _rebuild_parameter(data: Any, requires_grad: Any, hooks: Any = None) -> Parameter:
    if not isinstance(data, Tensor) or type(requires_grad) is not bool:
        raise CheckpointError(f"a Parameter needs a tensor and a bool, got {type(data).__name__}, "
                              f"{requires_grad!r}")
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data: Any, requires_grad: Any, hooks: Any, state: Any) -> Parameter:
    p = _rebuild_parameter(data, requires_grad, hooks)
    if state:
        if not isinstance(state, dict) or not all(isinstance(k, str) and not k.startswith("_") for k in state):
            raise CheckpointError("a Parameter's saved attributes must be a dict of public names")
        for k, v in state.items():
            setattr(p, k, v)
    return p


def _torch_device(spec: Any, index: Any = None) -> Device:
    if not isinstance(spec, str | int) or not (index is None or type(index) is int):
        raise CheckpointError(f"torch.device({spec!r}, {index!r}) is not a device")
    return Device(spec, index)


def _encode(text: Any, encoding: Any = "utf-8") -> bytes:
    """`_codecs.encode`, which protocol-2 pickles use to carry bytes: text encodings only."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1", "utf-8", "utf8"):
        raise CheckpointError(f"_codecs.encode is allowed for text to latin1/utf-8 only, not {encoding!r}")
    return codecs.encode(text, encoding)


def _torch_names() -> dict[tuple[str, str], Any]:
    names: dict[tuple[str, str], Any] = {
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
        ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
        ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
        ("torch", "device"): _torch_device,
        ("torch", "Size"): Size,
        ("torch.storage", "UntypedStorage"): _StorageType(_UNTYPED, "UntypedStorage"),
        ("torch", "UntypedStorage"): _StorageType(_UNTYPED, "UntypedStorage"),
    }
    for name, dtype in _DTYPE_BY_STORAGE.items():
        names[("torch", name)] = _StorageType(dtype, name)
    for dtype in dtypes.ALL_DTYPES:
        names[("torch", dtype.name)] = dtype
    for alias in ("half", "float", "double", "short", "int", "long"):
        names[("torch", alias)] = dtypes.as_dtype(alias)
    return names


TORCH_NAMES = _torch_names()
_SAFE_BUILTINS = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("builtins", "set"): set, ("builtins", "frozenset"): frozenset, ("builtins", "complex"): complex,
    ("builtins", "slice"): slice, ("builtins", "range"): range, ("builtins", "bytearray"): bytearray,
    ("_codecs", "encode"): _encode,
}
_PY2_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}  # protocol 2 writes Python 2's names

# -- the user's allow-list (torch.serialization.add_safe_globals) ---------------------------------------

_safe_globals: dict[str, Any] = {}
_safe_lock = threading.Lock()


def _global_name(entry: Any) -> tuple[str, Any]:
    if isinstance(entry, tuple):
        if len(entry) != 2 or not isinstance(entry[1], str):
            raise TypeError(f"a safe global is an object or an (object, 'module.name') pair, got {entry!r}")
        return entry[1], entry[0]
    module, name = getattr(entry, "__module__", None), getattr(entry, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(name, str):
        raise TypeError(f"{entry!r} has no __module__/__qualname__: pass it as (object, 'module.name')")
    return f"{module}.{name}", entry


def add_safe_globals(safe_globals: Iterable[Any]) -> None:
    """Allow these classes or functions (or (object, "module.name") pairs) in `load(weights_only=True)`.
    Only for globals you trust: unpickling calls them with the file's arguments."""
    pairs = [_global_name(g) for g in safe_globals]
    with _safe_lock:
        _safe_globals.update(pairs)


def get_safe_globals() -> list[Any]:
    """The globals allowed by `add_safe_globals` (objects, or (object, name) pairs where named so)."""
    with _safe_lock:
        return [obj if f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '')}" == name
                else (obj, name) for name, obj in _safe_globals.items()]


def clear_safe_globals() -> None:
    """Forget every global allowed by `add_safe_globals`."""
    with _safe_lock:
        _safe_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: Iterable[Any]) -> Iterator[None]:
    """Within the block, these globals are allowed in `load(weights_only=True)` (as `add_safe_globals`)."""
    pairs = dict(_global_name(g) for g in safe_globals)
    with _safe_lock:
        before = dict(_safe_globals)
        _safe_globals.update(pairs)
    try:
        yield
    finally:
        with _safe_lock:
            _safe_globals.clear()
            _safe_globals.update(before)


def unsafe_globals(pickled: bytes) -> list[str]:
    """The globals a pickle names that a weights-only load would refuse, read from its opcodes (nothing is
    unpickled): GLOBAL and INST name theirs; STACK_GLOBAL takes the two strings pushed last."""
    import pickletools

    found: list[str] = []
    pushed: list[Any] = []  # the values pushed so far where they are strings (None otherwise), enough for
    memo: dict[int, Any] = {}  # STACK_GLOBAL's two operands, which may come back from the memo
    for op, arg, _ in pickletools.genops(pickled):
        if op.name in ("GLOBAL", "INST"):
            module, _, name = str(arg).partition(" ")
        elif op.name == "STACK_GLOBAL" and len(pushed) >= 2 and all(isinstance(v, str) for v in pushed[-2:]):
            module, name = pushed[-2], pushed[-1]
        else:
            if op.name == "MEMOIZE":
                memo[len(memo)] = pushed[-1] if pushed else None
            elif op.name in ("PUT", "BINPUT", "LONG_BINPUT"):
                memo[int(arg)] = pushed[-1] if pushed else None
            elif op.name in ("GET", "BINGET", "LONG_BINGET"):
                pushed.append(memo.get(int(arg)))
            else:
                pushed.append(arg if isinstance(arg, str) and ("UNICODE" in op.name or "STRING" in op.name)
                              else None)
            continue
        module = _PY2_MODULES.get(module, module)
        if (module, name) in TORCH_NAMES or (module, name) in _SAFE_BUILTINS:
            continue
        with _safe_lock:
            if f"{module}.{name}" in _safe_globals:
                continue
        if f"{module}.{name}" not in found:
            found.append(f"{module}.{name}")
    return found


# -- the unpicklers --------------------------------------------------------------------------------------

StorageLoader = Callable[[_StorageType, str, str, int], LoadedStorage]


class _CheckpointUnpickler(pickle.Unpickler):
    def __init__(self, data: bytes, load_storage: StorageLoader, encoding: str = "utf-8") -> None:
        super().__init__(io.BytesIO(data), encoding=encoding)
        self._load_storage = load_storage
        self._storages: dict[str, LoadedStorage] = {}

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise CheckpointError(f"unknown persistent id {pid!r:.100}")
        _, kind, key, location, numel = pid
        if type(kind) is not _StorageType or not isinstance(key, str) or not isinstance(location, str) \
                or type(numel) is not int or numel < 0:
            raise CheckpointError(f"malformed storage reference {pid!r:.200}")
        if key not in self._storages:
            self._storages[key] = self._load_storage(kind, key, location, numel)
        storage = self._storages[key]
        if storage.dtype is not kind.dtype:
            raise CheckpointError(f"storage {key!r} is referenced with two dtypes")
        return storage


def _refuse_other_torch_names(module: str, name: str) -> None:
    if module == "torch" or module.startswith("torch."):
        raise CheckpointError(f"the checkpoint needs {module}.{name}, which opgen does not have (opgen reads "
                              "tensors of its dtypes, parameters, dtypes, devices and Size of PyTorch's names)")


class WeightsOnlyUnpickler(_CheckpointUnpickler):
    """Admits only tensors, storages, dtypes, devices, Size, containers, primitive values and the user's
    allow-list (Note [Checkpoints in PyTorch's format])."""

    def find_class(self, module: str, name: str) -> Any:
        module = _PY2_MODULES.get(module, module)
        found = TORCH_NAMES.get((module, name), _SAFE_BUILTINS.get((module, name)))
        if found is not None:
            return found
        with _safe_lock:
            allowed = _safe_globals.get(f"{module}.{name}")
        if allowed is not None:
            return allowed
        _refuse_other_torch_names(module, name)
        raise UnsafeGlobalError(
            f"Weights only load failed: unsupported global {module}.{name}. weights_only=True loads only "
            "tensors, containers and primitive values; if you trust this global, allow it with "
            f"G.serialization.add_safe_globals([{name}]) (or the safe_globals context manager); only if you "
            "trust the whole file, load it with weights_only=False, which can run arbitrary code")


class FullUnpickler(_CheckpointUnpickler):
    """Any global (`weights_only=False`): unpickling may run code from the file. PyTorch's tensor names
    are read as opgen's; other torch names cannot be loaded without torch."""

    def find_class(self, module: str, name: str) -> Any:
        module = _PY2_MODULES.get(module, module)
        found = TORCH_NAMES.get((module, name), _SAFE_BUILTINS.get((module, name)))
        if found is not None:
            return found
        _refuse_other_torch_names(module, name)
        return super().find_class(module, name)


# a typo-proof reference for tests and docs: the globals a weights-only load admits by default
DEFAULT_SAFE_GLOBALS = sorted(f"{m}.{n}" for m, n in (*TORCH_NAMES, *_SAFE_BUILTINS))
