"""Collation (torch.utils.data._utils.collate): samples into batches (default_collate), and NumPy values into
tensors without batching (default_convert)."""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from runtime import opcall
from runtime.tensor import Tensor


def _numeric_array(a: np.ndarray) -> bool:
    return a.dtype.kind in "biuf"


def default_convert(data: Any) -> Any:
    """NumPy arrays and scalars become tensors, recursing into dicts, namedtuples, tuples and lists; all
    else is returned as it is (the collate_fn of a DataLoader without automatic batching)."""
    G = opcall.api
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        return G.from_numpy(np.ascontiguousarray(data)) if _numeric_array(data) else data
    if isinstance(data, np.generic) and data.dtype.kind in "biuf":
        return G.tensor(data)
    if isinstance(data, Mapping):
        return type(data)({k: default_convert(v) for k, v in data.items()}) if type(data) is not dict else \
            {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, list):
        return [default_convert(d) for d in data]
    return data


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples into a batch, recursing into tuples, lists and dicts as PyTorch does.

    Tensors are stacked; NumPy arrays become stacked tensors; Python floats give a float64 tensor, ints an
    int64 tensor, bools a bool tensor; strings stay a list; a tuple or list of fields gives a list of
    collated fields (a namedtuple keeps its type); a dict gives a dict of collated values.
    """
    G = opcall.api
    if len(batch) == 0:
        raise IndexError("default_collate: the batch is empty")
    elem = batch[0]
    if isinstance(elem, Tensor):
        return G.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if not _numeric_array(elem):
            raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                            f"found array of dtype {elem.dtype}")
        return G.stack([G.from_numpy(np.ascontiguousarray(b)) for b in batch], 0)
    if isinstance(elem, np.generic):
        return G.tensor(np.array(batch))
    if isinstance(elem, bool):
        return G.tensor(list(batch), dtype=G.bool)
    if isinstance(elem, numbers.Integral):
        return G.tensor(list(batch), dtype=G.int64)
    if isinstance(elem, numbers.Real):
        return G.tensor(list(batch), dtype=G.float64)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch, strict=True)))
    if isinstance(elem, Sequence):
        size = len(elem)
        if any(len(b) != size for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch, strict=True)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                    f"found {type(elem)}")


__all__ = ["default_collate", "default_convert"]
