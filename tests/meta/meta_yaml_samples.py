"""`python3 -m tests.meta.meta_yaml_samples [OP ...]`: every root operator of native_functions.yaml on its
schema samples (tests/op_samples.py: every dtype, contiguous, transposed, offset, expanded, broadcast, 0-d
and empty layouts), run by opgen on the CPU and on meta tensors of the same geometry; prints the operators
whose meta outputs differ from the CPU ones in count, shape, dtype or strides (a diagnostic: where the CPU
kernel lays a result out otherwise than PyTorch, e.g. NumPy's order for a transposed or stride-0 input,
the Meta kernel, which follows PyTorch, differs from it)."""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np


def to_meta(value: Any) -> Any:
    """A CPU tensor as a meta tensor of the same sizes, strides, storage offset and dtype."""
    import generated as G
    if isinstance(value, G.Tensor):
        if value.device.type != "cpu":
            return value
        extent = value.storage_offset() + (sum((n - 1) * s for n, s in zip(value.shape, value.stride(), strict=True))
                                           + 1 if value.numel() else 0)
        base = G.empty(max(extent, 1), dtype=value.dtype, device="meta")
        return base.as_strided(tuple(value.shape), value.stride(), value.storage_offset())
    if isinstance(value, list | tuple):
        return type(value)(to_meta(v) for v in value)
    return value


def main(names: list[str]) -> None:
    import generated as G
    from codegen.api_python import op_id
    from generated import _ops
    from runtime.kernels.meta_shape import DataDependentOutputError
    from tests.meta.meta_samples import _geometry_differs
    from tests.op_samples import resolvable, samples
    from tests.ops import test_every_yaml_op as T
    bad = compared = 0
    for f in T.ROOTS:
        if (names and f.name not in names) or resolvable(f):
            continue
        call = getattr(_ops, f"_call_{op_id(f)}")
        fails = set()
        for s in samples(f):
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                args = [T._convert(a, s.layout, G) for a in T._opgen_defaults(f, s, T._dtype_args(s, G))]
                meta_args = [to_meta(a) for a in args]  # before the CPU call, which may change args in place
                try:
                    cpu = call(*args)
                except Exception:
                    continue
                compared += 1
                try:
                    meta = call(*meta_args)
                except DataDependentOutputError:
                    continue
                except Exception as e:
                    fails.add(f"{s.dtype}/{s.layout}: raised {type(e).__name__}: {str(e)[:140]}")
                    continue
            problem = _geometry_differs(cpu, meta)
            if problem:
                fails.add(f"{s.dtype}/{s.layout}: {problem}")
        if fails:
            bad += 1
            print(f.name, "|", " || ".join(sorted(fails)))
    print(f"{bad} operators differ ({compared} samples compared)")


if __name__ == "__main__":
    main(sys.argv[1:])
