"""`G.save` / `G.load` and the `G.serialization` namespace (PyTorch's `torch.serialization`).

`save(obj, f)` writes any picklable object (a state_dict, a whole Module, an optimizer's state, nested
containers of tensors) in PyTorch's checkpoint format (Note [Checkpoints in PyTorch's format] in
runtime/nn/checkpoint_pickle.py), to a path or a binary file object. A path is written atomically
(Note [Atomic saves]). `load(f)` reads such a file, whether opgen or PyTorch wrote it, and the `.npz`
archives of opgen's first format. `load` is `weights_only=True` by default: only tensors, containers,
primitive values and the globals allowed by `add_safe_globals` are unpickled, so loading a file from
anywhere runs none of its code. `weights_only=False` unpickles anything: only for files you trust.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pickle
import secrets
import struct
import sys
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import IO, Any

import numpy as np

from runtime import dtypes
from runtime.device import Device, as_device
from runtime.kernels.copy import move
from runtime.nn.checkpoint_archive import ArchiveReader, is_checkpoint_archive, write_archive
from runtime.nn.checkpoint_pickle import (
    DEFAULT_PROTOCOL,
    CheckpointError,
    CheckpointPickler,
    FullUnpickler,
    LoadedStorage,
    UnsafeGlobalError,
    WeightsOnlyUnpickler,
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
    unsafe_globals,
)
from runtime.tensor import Tensor

__all__ = ["DEFAULT_PROTOCOL", "CheckpointError", "UnsafeGlobalError", "add_safe_globals", "clear_safe_globals",
           "get_safe_globals", "get_unsafe_globals_in_checkpoint", "load", "safe_globals", "save"]

FileLike = str | os.PathLike[str] | IO[bytes]
MapLocation = None | str | Device | Mapping[str, Any] | Callable[[Tensor, str], Any]


# -- save --------------------------------------------------------------------------------------------------

def save(obj: Any, f: FileLike, pickle_module: Any = pickle, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """Write `obj` to `f` (a path or a writable binary file) in PyTorch's checkpoint format.

    A path is replaced atomically: the file is complete and on disk before it takes the name, and an
    error leaves any previous file of that name untouched."""
    if pickle_module is not pickle:
        raise ValueError("opgen pickles with its own pickler: pickle_module must be the pickle module")
    if not _use_new_zipfile_serialization:
        raise ValueError("opgen writes only the zip checkpoint format (_use_new_zipfile_serialization=True)")
    if not isinstance(pickle_protocol, int) or not 2 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(f"pickle_protocol must be an int from 2 to {pickle.HIGHEST_PROTOCOL}, got {pickle_protocol!r}")
    buffer = io.BytesIO()
    pickler = CheckpointPickler(buffer, protocol=pickle_protocol)
    pickler.dump(obj)  # every pickling error happens here, before anything touches `f`
    storages = [(r.key, r.host_bytes()) for r in pickler.records]

    def write(fh: IO[bytes]) -> None:
        write_archive(fh, buffer.getvalue(), storages)

    if isinstance(f, str | os.PathLike):
        _write_atomic(os.fspath(f), write)
    elif hasattr(f, "write"):
        write(f)
    else:
        raise TypeError(f"save: f must be a path or a writable binary file object, not {type(f).__name__}")


# Note [Atomic saves]
# A checkpoint is written to a new file in the target's directory (a random name, created exclusively
# with the mode a new file would get), flushed and fsynced, given the mode of the file it replaces, and
# renamed over the target in one step (os.replace), then the directory is fsynced so the rename
# survives a crash. At every instant the name holds either the old checkpoint or the whole new one; on
# any error the temporary file is removed. A symlink is followed: its target file is replaced.
def _write_atomic(path: str, write: Callable[[IO[bytes]], None]) -> None:
    target = os.path.realpath(path)
    folder, base = os.path.split(target)
    if os.path.isdir(target):
        raise IsADirectoryError(21, "Is a directory", path)
    tmp = os.path.join(folder, f".{base}.{secrets.token_hex(8)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as e:
        raise type(e)(e.errno, f"cannot write a checkpoint beside {path!r}: {e.strerror}", path) from e
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        if os.path.exists(target):
            os.chmod(tmp, os.stat(target).st_mode & 0o7777)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:
        dir_fd = os.open(folder or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass  # a file system that cannot sync a directory; the file itself is synced
    finally:
        os.close(dir_fd)


# -- load --------------------------------------------------------------------------------------------------

def _name_of(f: Any) -> str:
    if isinstance(f, str | os.PathLike):
        return os.fspath(f)
    return str(getattr(f, "name", None) or f"<{type(f).__name__}>")


def load(f: FileLike, map_location: MapLocation = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Read an object written by `save` (or by PyTorch's `torch.save`, or an opgen `.npz`) from `f`.

    weights_only (default True): unpickle only tensors, containers, primitive values and the globals
    allowed by `add_safe_globals`; anything else raises pickle.UnpicklingError naming it. With
    `weights_only=False` the file may run arbitrary code while it loads: use it only for trusted files.
    map_location: where the storages go. None: the device each was saved from; a device or its string:
    that device for all; a dict: saved location -> location ("cuda:0" -> "cpu"), others unchanged; a
    callable `(storage, location)`: `storage` is a 1-D uint8 CPU tensor of the storage's bytes and
    `location` the saved one ("cpu", "cuda:0"); it returns the storage moved (`storage.cuda()`), or
    None for the default."""
    if weights_only is None:
        weights_only = True
    if pickle_module is not None and pickle_module is not pickle:
        raise ValueError("opgen unpickles with its own unpickler: pickle_module must be None or pickle")
    if mmap:
        raise ValueError("load(mmap=True) is not supported: opgen reads every storage into memory")
    unknown = set(pickle_load_args) - {"encoding"}
    if unknown:
        raise TypeError(f"load() got unexpected keyword arguments {sorted(unknown)}")
    encoding = pickle_load_args.get("encoding", "utf-8")
    name = _name_of(f)
    fh: Any
    if isinstance(f, str | os.PathLike):
        with open(f, "rb") as fh:
            return _load_file(fh, name, map_location, weights_only, encoding)
    if not hasattr(f, "read"):
        raise TypeError(f"load: f must be a path or a readable binary file object, not {type(f).__name__}")
    fh = f if getattr(f, "seekable", lambda: False)() else io.BytesIO(f.read())
    return _load_file(fh, name, map_location, weights_only, encoding)


def _load_file(fh: IO[bytes], name: str, map_location: MapLocation, weights_only: bool, encoding: str) -> Any:
    try:
        zf = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, EOFError, OSError) as e:
        raise CheckpointError(f"{name}: not a readable checkpoint (a zip archive in PyTorch's format or an "
                              f"opgen .npz was expected; the file is truncated, corrupted or of another kind: "
                              f"{e})") from e
    with zf:
        try:
            if not is_checkpoint_archive(zf):
                fh.seek(0)
                return _load_npz(fh, name, map_location)
            reader = ArchiveReader(zf)
            data = reader.read("data.pkl")
            assert data is not None
            restore = _Restorer(reader, map_location)
            unpickler_type = WeightsOnlyUnpickler if weights_only else FullUnpickler
            return unpickler_type(data, restore.load_storage, encoding=encoding).load()
        except CheckpointError as e:
            raise CheckpointError(f"{name}: {e}") from e
        except UnsafeGlobalError as e:
            raise UnsafeGlobalError(f"{name}: {e}") from None
        except pickle.UnpicklingError as e:
            raise CheckpointError(f"{name}: corrupted checkpoint: {e}") from e
        except (zipfile.BadZipFile, ValueError, EOFError, struct.error, OSError) as e:
            raise CheckpointError(f"{name}: corrupted or truncated checkpoint: {e}") from e


class _Restorer:
    """Reads each storage record and places it where `map_location` says (see `load`)."""

    def __init__(self, reader: ArchiveReader, map_location: MapLocation) -> None:
        self.reader = reader
        self.map_location = map_location
        if map_location is not None and not isinstance(map_location, str | Device | Mapping) \
                and not callable(map_location):
            raise TypeError("map_location must be None, a device, a string, a dict or a callable, not "
                            f"{type(map_location).__name__}")

    def load_storage(self, kind: Any, key: str, location: str, numel: int) -> LoadedStorage:
        itemsize = 1 if kind.dtype is None else kind.dtype.itemsize
        raw = self.reader.read(f"data/{key}", size=numel * itemsize)
        assert raw is not None
        host = np.frombuffer(bytearray(raw), dtype=np.uint8)
        if self.reader.byteorder != sys.byteorder and itemsize > 1:
            host = host.view(f"u{itemsize}").byteswap().view(np.uint8)
        return LoadedStorage(self._place(host, location), kind.dtype)

    def _place(self, host: np.ndarray, location: str) -> Any:
        where = self.map_location
        if callable(where) and not isinstance(where, Device):
            moved = where(Tensor._wrap(host, dtypes.uint8), location)
            if moved is None:
                return self._to(host, location)
            if not isinstance(moved, Tensor) or moved.dtype is not dtypes.uint8 or moved.dim() != 1:
                raise TypeError("a map_location callable must return the storage it was given (a 1-D uint8 "
                                f"tensor), moved, or None; it returned {type(moved).__name__}")
            return moved.contiguous()._data
        if isinstance(where, Mapping):
            return self._to(host, where.get(location, location))
        return self._to(host, location if where is None else where)

    @staticmethod
    def _to(host: np.ndarray, location: Any) -> Any:
        try:
            device = as_device(location)
        except (TypeError, RuntimeError) as e:
            raise CheckpointError(f"cannot restore a storage saved on {location!r}: {e}") from e
        if device.type == "meta":
            raise CheckpointError("map_location='meta' is not supported: opgen's meta tensors hold no data")
        if device.type == "cuda":
            from runtime import cuda
            if not cuda.is_available():
                raise RuntimeError(f"the checkpoint holds a tensor saved on {location}, but CUDA is not "
                                   "available here: load it with map_location='cpu'")
        return move(host, device)


def get_unsafe_globals_in_checkpoint(f: FileLike) -> list[str]:
    """The "module.name" of every global in the checkpoint `f` that `load(weights_only=True)` would refuse
    (not allowed by default nor by `add_safe_globals`); the file's pickle is read, never run."""
    name = _name_of(f)
    fh: Any
    with contextlib.ExitStack() as stack:
        if isinstance(f, str | os.PathLike):
            fh = stack.enter_context(open(f, "rb"))
        else:
            fh = f if getattr(f, "seekable", lambda: False)() else io.BytesIO(f.read())
        try:
            with zipfile.ZipFile(fh) as zf:
                if not is_checkpoint_archive(zf):
                    return []  # an .npz: no pickle
                data = ArchiveReader(zf).read("data.pkl")
                assert data is not None
                return unsafe_globals(data)
        except (zipfile.BadZipFile, ValueError, EOFError, struct.error) as e:
            raise CheckpointError(f"{name}: not a readable checkpoint: {e}") from e


# -- the .npz files of opgen's first format ----------------------------------------------------------------

_NPZ_META = "__opgen__"


def _load_npz(fh: IO[bytes], name: str, map_location: MapLocation) -> Any:
    """An archive written by opgen's `save` before it wrote PyTorch's format (a .npz with a JSON tree), or
    a plain .npz (a dict of CPU tensors). Never unpickles."""
    from runtime.factories import tensor
    device = map_location if isinstance(map_location, str | Device) else None
    try:
        with np.load(fh, allow_pickle=False) as archive:
            if _NPZ_META not in archive.files:
                return OrderedDict((k, tensor(archive[k], device=device)) for k in archive.files)
            meta = json.loads(str(archive[_NPZ_META]))
            if meta.get("format") != "opgen" or meta.get("version") != 1:
                raise CheckpointError("an .npz archive, but not one of opgen's version 1")
            return _decode_npz(meta["tree"], archive, device)
    except (ValueError, KeyError, zipfile.BadZipFile, json.JSONDecodeError) as e:
        raise CheckpointError(f"{name}: corrupted .npz archive: {e}") from e


def _decode_npz(node: Any, archive: Any, device: Any) -> Any:
    from runtime.factories import tensor
    if isinstance(node, dict):
        if "__tensor__" in node:
            return tensor(archive[node["__tensor__"]], dtype=dtypes.as_dtype(node["dtype"]), device=device)
        if "__dict__" in node:
            return OrderedDict((k, _decode_npz(v, archive, device)) for k, v in node["__dict__"])
        if "__list__" in node:
            return [_decode_npz(v, archive, device) for v in node["__list__"]]
        if "__tuple__" in node:
            return tuple(_decode_npz(v, archive, device) for v in node["__tuple__"])
        raise CheckpointError(f"unknown node {sorted(node)} in an opgen .npz archive")
    return node
