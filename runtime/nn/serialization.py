"""`G.save` / `G.load`: state dicts (and nested dicts/lists of tensors and numbers) as `.npz` files.

Format: an ordinary NumPy `.npz` archive (read with `np.load(path)`, no pickle). Every tensor is one
array, stored under its path in the object (`"0.weight"` for a module's state dict; `"state/0/exp_avg"`
for an optimizer's); the entry `__opgen__` holds the object's structure as JSON, with each tensor
leaf written as {"__tensor__": key, "dtype": name}. Loaded tensors are on the CPU unless `map_location`
names a device.
"""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np

from runtime import dtypes
from runtime.tensor import Tensor

META_KEY = "__opgen__"
FORMAT_VERSION = 1


def _encode(obj: Any, path: str, arrays: dict[str, np.ndarray]) -> Any:
    if isinstance(obj, Tensor):
        if obj.dtype.np is None:
            raise TypeError(f"cannot save a {obj.dtype.name} tensor to .npz ({path}): NumPy has no "
                            "such dtype")
        key = path or "tensor"
        if key in arrays or key == META_KEY:
            raise ValueError(f"two tensors would be stored under the same name {key!r}")
        # np.array, not np.ascontiguousarray: the latter makes a 0-dim tensor (a BatchNorm's
        # num_batches_tracked) 1-dim, and the loaded state_dict would no longer fit the module.
        arrays[key] = np.array(obj.detach().numpy(force=True), order="C")
        return {"__tensor__": key, "dtype": obj.dtype.name}
    if isinstance(obj, Mapping):
        items = []
        for k, v in obj.items():
            if not isinstance(k, str | int) or isinstance(k, bool):
                raise TypeError(f"cannot save a dict key of type {type(k).__name__} (str or int expected)")
            items.append([k, _encode(v, f"{path}/{k}" if path else str(k), arrays)])
        return {"__dict__": items}
    if isinstance(obj, list | tuple):
        values = [_encode(v, f"{path}/{i}" if path else str(i), arrays) for i, v in enumerate(obj)]
        return {"__tuple__" if isinstance(obj, tuple) else "__list__": values}
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"cannot save an object of type {type(obj).__name__} at {path or 'the top level'!r} "
                    "(tensors, dicts, lists, tuples, numbers, strings and None can be saved)")


def save(obj: Any, f: str | os.PathLike[str]) -> None:
    """Write `obj` (typically `module.state_dict()` or `optimizer.state_dict()`) to `f` as .npz."""
    arrays: dict[str, np.ndarray] = {}
    tree = _encode(obj, "", arrays)
    meta = json.dumps({"format": "opgen", "version": FORMAT_VERSION, "tree": tree})
    with open(f, "wb") as fh:  # an open file keeps NumPy from appending ".npz" to the name
        np.savez(fh, **arrays, **{META_KEY: np.array(meta)})


def _decode(node: Any, archive: Any, device: Any) -> Any:
    if isinstance(node, dict):
        if "__tensor__" in node:
            from runtime.factories import tensor
            return tensor(archive[node["__tensor__"]], dtype=dtypes.as_dtype(node["dtype"]), device=device)
        if "__dict__" in node:
            return OrderedDict((k, _decode(v, archive, device)) for k, v in node["__dict__"])
        if "__list__" in node:
            return [_decode(v, archive, device) for v in node["__list__"]]
        if "__tuple__" in node:
            return tuple(_decode(v, archive, device) for v in node["__tuple__"])
        raise ValueError(f"corrupt opgen archive: unknown node {sorted(node)}")
    return node


def load(f: str | os.PathLike[str], map_location: Any = None) -> Any:
    """Read an object written by `save`; a plain .npz (no opgen header) loads as a dict of CPU tensors."""
    from runtime.factories import tensor
    with np.load(f, allow_pickle=False) as archive:
        if META_KEY not in archive.files:
            return OrderedDict((k, tensor(archive[k], device=map_location)) for k in archive.files)
        meta = json.loads(str(archive[META_KEY]))
        if meta.get("format") != "opgen" or meta.get("version") != FORMAT_VERSION:
            raise ValueError(f"{os.fspath(f)}: not an opgen archive of version {FORMAT_VERSION}")
        return _decode(meta["tree"], archive, map_location)
