"""OpInfo samples on device 'meta' in PyTorch and in opgen: what tests/meta/test_meta_opinfo.py compares.

The samples of PyTorch's op_db are turned into opgen calls by tests/opinfo_coverage.py (names, re-bound
lambdas, argument conversion); here each sample tensor becomes, in both libraries, an empty meta tensor
of the same sizes, strides and dtype (`empty_strided(..., device='meta')`), so neither side computes a
value. The outputs are compared by shape and dtype, and by strides where PyTorch's meta result has the
strides of its CPU result (PyTorch's own meta kernels do not always lay outputs out as its CPU kernels do).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests import opinfo_coverage as C

DTYPES = ("float32", "int64")


def _viewed(value: Any) -> Any:
    """The tensor whose storage `value` views at an offset (a sample like `base[5:15]`), else None."""
    base = value._base
    return base if base is not None and value.storage_offset() and value.dtype == base.dtype else None


def _torch_meta(value: Any) -> Any:
    import torch
    if isinstance(value, torch.Tensor):
        base = _viewed(value)
        if base is not None:  # the same view of a meta base, so that the storage offset is kept
            return _torch_meta(base).as_strided(tuple(value.shape), value.stride(), value.storage_offset())
        return torch.empty_strided(tuple(value.shape), value.stride(), dtype=value.dtype, device="meta")
    if isinstance(value, list):
        return [_torch_meta(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_torch_meta(v) for v in value)
    if isinstance(value, dict):
        return {k: _torch_meta(v) for k, v in value.items()}
    return value


def _opgen_meta(value: Any) -> Any:
    import torch
    if isinstance(value, torch.Tensor):
        base = _viewed(value)
        if base is not None:
            return _opgen_meta(base).as_strided(tuple(value.shape), value.stride(), value.storage_offset())
        G = C._G()
        dt = getattr(G, str(value.dtype).removeprefix("torch."))
        return G.empty_strided(tuple(value.shape), value.stride(), dtype=dt, device="meta")
    if isinstance(value, list):
        return [_opgen_meta(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_opgen_meta(v) for v in value)
    if isinstance(value, dict):
        return {k: _opgen_meta(v) for k, v in value.items()}
    return C.to_opgen(value)


def _tensors(value: Any, is_tensor: Callable[[Any], bool]) -> list[Any]:
    if is_tensor(value):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v, is_tensor)]
    return []


@dataclass
class MetaResult:
    key: str
    checked: int = 0
    failures: list[str] = field(default_factory=list)


def _compare(expected: Any, reference: Any, actual: Any) -> str | None:
    """What differs between torch's meta outputs (`expected`, with its CPU outputs `reference`) and opgen's."""
    import torch

    G = C._G()
    want = _tensors(expected, lambda v: isinstance(v, torch.Tensor))
    ref = _tensors(reference, lambda v: isinstance(v, torch.Tensor))
    got = _tensors(actual, lambda v: isinstance(v, G.Tensor))
    if len(want) != len(got):
        return f"{len(got)} tensor outputs, torch has {len(want)}"
    for i, (w, g) in enumerate(zip(want, got, strict=True)):
        if g.device.type != w.device.type:  # factories' samples name device='cpu'
            return f"output {i} is on {g.device}, torch's on {w.device}"
        if tuple(w.shape) != tuple(g.shape):
            return f"output {i}: shape {list(g.shape)}, torch {list(w.shape)}"
        if str(w.dtype).removeprefix("torch.") != g.dtype.name:
            return f"output {i}: dtype {g.dtype.name}, torch {w.dtype}"
        same_as_cpu = i < len(ref) and tuple(ref[i].shape) == tuple(w.shape) and ref[i].stride() == w.stride()
        if same_as_cpu and w.numel() > 1 and tuple(w.stride()) != tuple(g.stride()):
            return f"output {i} of shape {list(w.shape)}: strides {g.stride()}, torch {w.stride()}"
    return None


def check_meta(info: Any, dtypes: tuple[str, ...] = DTYPES, max_samples: int = 1) -> MetaResult:
    """Run the first samples of each dtype on meta tensors in both libraries and compare their outputs."""
    import torch

    key = C.key_of(info)
    result = MetaResult(key)
    fn = C.opgen_callable(info)
    if fn is None:
        return result
    supported = {str(d).removeprefix("torch.") for d in info.supported_dtypes("cpu")}
    for dtype_name in dtypes:
        if dtype_name not in supported:
            continue
        try:
            # the sample generator itself: OpInfo.sample_inputs wraps it in an iterator that inspects the whole
            # call stack per sample (tracking for torch's own test classes), 100x the cost of the samples
            samples = list(itertools.islice(info.sample_inputs_func(info, "cpu", getattr(torch, dtype_name), False),
                                            max_samples))
        except Exception:
            continue
        for sample in samples:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:  # torch's meta result, and its CPU result for the strides its CPU kernel gives
                    expected = info.op(*_torch_meta((sample.input, *sample.args)), **_torch_meta(sample.kwargs))
                    reference = info.op(sample.input, *sample.args, **sample.kwargs)
                except Exception:
                    continue  # torch refuses the sample on meta tensors (data-dependent shapes ...) or at all
                result.checked += 1
                args = _opgen_meta((sample.input, *sample.args))
                try:
                    actual = fn(*args, **_opgen_meta(sample.kwargs))
                except Exception as e:
                    result.failures.append(f"{dtype_name}: raised {type(e).__name__}: {str(e)[:200]}")
                    continue
            problem = _compare(expected, reference, actual)
            if problem:
                result.failures.append(f"{dtype_name}: {problem}")
    return result


def _geometry_differs(cpu: Any, meta: Any) -> str | None:
    """What differs between opgen's CPU outputs and its meta outputs: count, shapes, dtypes, strides (those
    of a size-1 dim, or of a tensor with no elements or one, carry no meaning and are not compared)."""
    G = C._G()
    a = _tensors(cpu, lambda v: isinstance(v, G.Tensor))
    b = _tensors(meta, lambda v: isinstance(v, G.Tensor))
    if len(a) != len(b):
        return f"{len(b)} tensor outputs on meta, {len(a)} on the CPU"
    for i, (c, m) in enumerate(zip(a, b, strict=True)):
        if m.device.type != "meta" and c.device.type != m.device.type:
            return f"output {i} is on {m.device}"
        if tuple(c.shape) != tuple(m.shape):
            return f"output {i}: shape {list(m.shape)} on meta, {list(c.shape)} on the CPU"
        if c.dtype != m.dtype:
            return f"output {i}: dtype {m.dtype.name} on meta, {c.dtype.name} on the CPU"
        if c.numel() > 1 and any(sc != sm for sc, sm, n in zip(c.stride(), m.stride(), c.shape, strict=True)
                                 if n != 1):
            return f"output {i} of shape {list(c.shape)}: strides {m.stride()} on meta, {c.stride()} on the CPU"
    return None


def check_meta_vs_cpu(info: Any, dtypes: tuple[str, ...] = DTYPES, max_samples: int = 3) -> MetaResult:
    """Run the first samples of each dtype through opgen on the CPU and on meta tensors of the same
    geometry: the Meta kernels describe opgen's own kernels, so the outputs' shapes, dtypes and strides
    agree. A sample the CPU refuses is skipped; one the meta call refuses as data-dependent is counted as
    agreeing (its shape is a matter of values)."""
    import torch

    from runtime.kernels.meta_shape import DataDependentOutputError

    result = MetaResult(C.key_of(info))
    fn = C.opgen_callable(info)
    if fn is None:
        return result
    supported = {str(d).removeprefix("torch.") for d in info.supported_dtypes("cpu")}
    for dtype_name in (d for d in dtypes if d in supported):
        try:
            samples = list(itertools.islice(info.sample_inputs_func(info, "cpu", getattr(torch, dtype_name), False),
                                            max_samples))
        except Exception:
            continue
        for sample in samples:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    cpu = fn(*C.to_opgen((sample.input, *sample.args)), **C.to_opgen(sample.kwargs))
                except Exception:
                    continue
                result.checked += 1
                try:
                    meta = fn(*_opgen_meta((sample.input, *sample.args)), **_opgen_meta(sample.kwargs))
                except DataDependentOutputError:
                    continue
                except Exception as e:
                    result.failures.append(f"{dtype_name}: raised {type(e).__name__}: {str(e)[:200]}")
                    continue
            problem = _geometry_differs(cpu, meta)
            if problem:
                result.failures.append(f"{dtype_name}: {problem}")
    return result


def main() -> None:
    """`python3 -m tests.meta.meta_samples [--cpu] [--all]`: every entry's verdict (for finding what to fix):
    against PyTorch's meta results, or with --cpu against opgen's own CPU results; --all takes every sample
    of ten dtypes instead of the first of float32 and int64 (minutes)."""
    import sys
    import time
    start = time.perf_counter()
    wide = "--all" in sys.argv
    dtypes = ("float32", "int64", "float64", "float16", "bool", "uint8", "int8", "int16", "int32") if wide \
        else DTYPES
    samples = 10_000 if wide else 1
    check = check_meta_vs_cpu if "--cpu" in sys.argv else check_meta
    entries = [o for o in C.eligible(C.load_op_db()) if C.resolve(o) is not None]
    bad = 0
    for info in entries:
        r = check(info, dtypes, samples)
        if r.failures:
            bad += 1
            print(r.key, "|", " || ".join(sorted(set(r.failures))))
    print(f"{bad} of {len(entries)} entries differ ({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
