"""Samples of PyTorch's OpInfo database as opgen's arguments, and opgen's results compared with PyTorch's.

The conversion and comparison half of the OpInfo harness (tests/opinfo_coverage.py runs the entries;
tests/ops/test_opinfo.py on the CPU and tests/cuda/test_opinfo_on_device.py on the CUDA device drive it).
Samples are made by PyTorch on its CPU; `to_opgen(value, device=...)` builds opgen's tensors on the device
under test (`device="cuda"`: the emulated device without a GPU), so the oracle is always PyTorch's CPU result.
`compare` checks structure, dtypes, shapes, the device every result tensor lives on, and values within the
tolerance of the dtype (loosened by the OpInfo's `toleranceOverride` for that device type).

Nothing here imports torch at module level.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np


def _G() -> Any:
    import generated
    return generated


# ---- conversion ------------------------------------------------------------------------------------------

def to_opgen(value: Any, *, grad: bool = False, leaves: list[Any] | None = None, device: str = "cpu") -> Any:
    """A torch sample argument (nested) as opgen's, its tensors on `device`. With `grad`, tensors that require
    grad in torch become opgen leaves that require grad (collected in `leaves`, in the order torch's are
    found). A `device` argument of the sample (PyTorch made it on its CPU) names `device`."""
    import torch
    G = _G()

    def again(v: Any) -> Any:
        return to_opgen(v, grad=grad, leaves=leaves, device=device)
    if isinstance(value, torch.Tensor):
        base = value._base
        if base is not None and base._base is None and not base.requires_grad and value.dtype == base.dtype:
            # a view (`base[5:15]`): the same view of the converted base, so that ops that see the storage
            # (as_strided's storage_offset) see the same one
            out = to_opgen(base, device=device).as_strided(tuple(value.shape), value.stride(),
                                                           value.storage_offset())
        else:
            if value.dtype == torch.bfloat16 and device == "cpu":
                raise Inexpressible("a bfloat16 tensor: opgen has bfloat16 on CUDA only")
            array = value.detach().cpu().resolve_conj().resolve_neg().numpy().copy()
            out = G.tensor(array, dtype=_dtype_of(value.dtype), device=device)
        if grad and value.requires_grad:
            out.requires_grad_(True)
            if leaves is not None:
                leaves.append(out)
        return out
    if isinstance(value, torch.dtype):
        return _dtype_of(value)
    if isinstance(value, torch.Size):
        return tuple(value)
    if isinstance(value, torch.device):
        return device if value.type == "cpu" else str(value)
    if isinstance(value, torch.memory_format):
        return getattr(G, str(value).removeprefix("torch."), None)
    if isinstance(value, torch.Generator):
        return None
    if isinstance(value, torch.nn.Module):  # a module passed as a function (distance_function=PairwiseDistance())
        return _module_to_opgen(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and type(value).__module__.startswith("torch."):
        # an options record of torch.nn (LinearCrossEntropyOptions): opgen's record of the same name and fields
        ours = getattr(G.nn, type(value).__name__)
        return ours(**{f.name: again(getattr(value, f.name)) for f in dataclasses.fields(value)})
    if isinstance(value, list):
        return [again(v) for v in value]
    if isinstance(value, tuple):
        return tuple(again(v) for v in value)
    if isinstance(value, dict):
        return {k: device if k == "device" and v == "cpu" else again(v) for k, v in value.items()}
    return value


def _module_to_opgen(module: Any) -> Any:
    """opgen's module of the same class for a torch module without parameters, its constants (PyTorch's
    `__constants__`: PairwiseDistance's norm, eps, keepdim) copied over."""
    cls = getattr(_G().nn, type(module).__name__, None)
    if cls is None or list(module.parameters()) or list(module.buffers()):
        raise Mismatch(f"the torch module {type(module).__name__} has no parameterless opgen counterpart")
    twin = cls()
    for name in getattr(module, "__constants__", ()):
        setattr(twin, name, getattr(module, name))
    return twin


def torch_leaves(value: Any, out: list[Any]) -> list[Any]:
    import torch
    if isinstance(value, torch.Tensor):
        if value.requires_grad:
            out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            torch_leaves(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            torch_leaves(v, out)
    return out


# ---- comparison ------------------------------------------------------------------------------------------

class Mismatch(AssertionError):
    pass


class Inexpressible(Exception):
    """A sample opgen cannot be given (a complex tensor or dtype, a later issue): skipped, not failed."""


def _dtype_of(value: Any) -> Any:
    name = str(value).removeprefix("torch.")
    if name.startswith("complex") or name in ("cfloat", "cdouble", "chalf"):
        raise Inexpressible(f"torch.{name}: opgen has no complex dtypes")
    return getattr(_G(), name)


@dataclass(frozen=True)
class Tol:
    atol: float
    rtol: float


DEFAULT_TOL = {"float16": Tol(1e-3, 1e-3), "bfloat16": Tol(1e-5, 1.6e-2), "float32": Tol(1e-5, 1.3e-5),
               "float64": Tol(1e-7, 1e-7)}


def tolerance(info: Any, dtype_name: str, device: str = "cpu") -> Tol:
    """The default tolerance of `dtype_name`, loosened by the entry's toleranceOverride decorators that
    apply on `device`'s type (or everywhere)."""
    import torch
    base = DEFAULT_TOL.get(dtype_name, Tol(0.0, 0.0))
    atol, rtol = base.atol, base.rtol
    tdtype = getattr(torch, dtype_name)
    for deco in getattr(info, "decorators", ()) or ():
        if getattr(deco, "device_type", None) not in (None, device):
            continue
        for d in getattr(deco, "decorators", ()) or ():
            over = getattr(d, "d", None)
            if isinstance(over, dict) and tdtype in over:
                if isinstance(over[tdtype], float):  # precisionOverride: an absolute tolerance
                    atol = max(atol, over[tdtype])
                else:  # toleranceOverride: atol and rtol
                    atol, rtol = max(atol, over[tdtype].atol), max(rtol, over[tdtype].rtol)
    return Tol(atol, rtol)


def np_of(t: Any) -> np.ndarray:
    """The values of an opgen tensor on any device (a copy to the host for a device tensor; not bfloat16,
    which NumPy lacks: widen it first)."""
    t = t.detach() if hasattr(t, "detach") else t
    return np.asarray(t.cpu().numpy() if str(t.device) != "cpu" else t.numpy())


def compare(expected: Any, actual: Any, tol: Tol, *, values: bool = True, where: str = "result",
            device: str | None = None) -> None:
    """Raise Mismatch unless opgen's `actual` matches torch's `expected` (structure, dtypes, shapes, values;
    with `device`, every result tensor lives on that device type)."""
    import torch
    G = _G()
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, G.Tensor):
            raise Mismatch(f"{where}: expected a tensor, got {type(actual).__name__}")
        e_dt = str(expected.dtype).removeprefix("torch.")
        a_dt = str(actual.dtype).removeprefix("opgen.")
        if e_dt != a_dt:
            raise Mismatch(f"{where}: dtype {a_dt}, torch gives {e_dt}")
        if device is not None and actual.device.type != device:
            raise Mismatch(f"{where}: on {actual.device}, expected a {device} tensor")
        if tuple(expected.shape) != tuple(actual.shape):
            raise Mismatch(f"{where}: shape {tuple(actual.shape)}, torch gives {tuple(expected.shape)}")
        if not values:
            return
        base = DEFAULT_TOL.get(e_dt)
        if base is not None:  # an integer input with a floating result: the result's tolerance
            tol = Tol(max(tol.atol, base.atol), max(tol.rtol, base.rtol))
        if e_dt == "bfloat16":  # NumPy has no bfloat16: both sides' values widen exactly to float32
            e, a = expected.detach().float().numpy(force=True), np_of(actual.float())
        else:
            e, a = expected.detach().numpy(force=True), np_of(actual)
        if e.dtype.kind in "biu":
            if not np.array_equal(e, a):
                raise Mismatch(f"{where}: values differ at {int((e != a).sum())} of {e.size} places")
            return
        scale = tol.atol, tol.rtol
        with np.errstate(invalid="ignore", over="ignore"):
            ok = np.isclose(a.astype(np.float64), e.astype(np.float64), atol=scale[0], rtol=scale[1], equal_nan=True)
        if not ok.all():
            bad = np.argwhere(~ok.reshape(e.shape) if e.ndim else ~ok.reshape(()))[:1]
            idx = tuple(bad[0]) if bad.size else ()
            raise Mismatch(f"{where}: values differ at {int((~ok).sum())} of {e.size} places "
                           f"(first at {idx}: {a[idx] if a.ndim else a} vs torch {e[idx] if e.ndim else e})")
        return
    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            raise Mismatch(f"{where}: expected a sequence of {len(expected)}, got {type(actual).__name__}")
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            compare(e, a, tol, values=values, where=f"{where}[{i}]", device=device)
        return
    if isinstance(actual, G.Tensor) and actual.ndim == 0:
        actual = actual.item()
    if isinstance(expected, float) and isinstance(actual, (int, float)):
        if values and not (math.isclose(expected, actual, rel_tol=max(tol.rtol, 1e-7), abs_tol=tol.atol)
                           or (math.isnan(expected) and math.isnan(actual))):
            raise Mismatch(f"{where}: {actual!r} vs torch {expected!r}")
        return
    if values and expected != actual:
        raise Mismatch(f"{where}: {actual!r} vs torch {expected!r}")


