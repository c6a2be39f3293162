"""What every backend's kernel of one pointwise op shares, derived once from its NativeFunction.

The CPU kernels (codegen/render/cpu_kernels.py) and the CUDA kernels (codegen/gen_cuda.py) each need the
op's kernel name, its promote kind, which tensors are conditions, 0-d or must share the first tensor's dtype,
which scalars take part in promotion and whether an in-place form exists. `PointwiseKernel` holds those
facts and `pointwise_kernel` derives them; each backend's context is a subclass that adds what only that
backend needs, and names the arguments as its kernels' parameters do (`name`: `py_name` for the CPU's
Python kernels, which call `self` `input`; `local_name` for the CUDA launchers, which keep `self`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from codegen.api_python import kernel_name
from codegen.kernel_spec import condition_tensors
from codegen.native import NativeFunction
from codegen.schema_parser import default_value
from runtime.vocabulary import PromoteKind

# Pointwise ops whose PyTorch CPU result is row-major whatever the inputs' layout (measured against torch
# 2.13: its masked_fill clones `self` contiguous before filling, its log_sigmoid writes a fresh buffer), where
# every other pointwise result follows its inputs' layout (Note [Pointwise output strides] in
# runtime/kernels/dense_copy.py). Their CPU and Meta kernels lay the result out row-major.
ROW_MAJOR_RESULTS: frozenset[str] = frozenset({"masked_fill", "log_sigmoid"})


@dataclass(frozen=True, kw_only=True)
class PointwiseKernel:
    """The shared facts of one pointwise op's kernels (argument names as the backend spells them)."""

    kernel: str  # kernel_name(f), e.g. add_Tensor
    op: str  # the op's name, for error messages (an identifier)
    promote: PromoteKind
    tensors: tuple[str, ...]  # the tensor arguments, in spec order
    scalars: tuple[str, ...]  # the scalar arguments, in spec order
    promote_scalars: tuple[str, ...]  # the scalars that take part in type promotion
    inplace: bool  # has an in-place form (NativeFunction.group)
    conditions: tuple[str, ...] = ()  # tensors used as a condition: must be bool (kernel_spec.condition_tensors)
    zero_dim: tuple[str, ...] = ()  # tensors that must be 0-dimensional (PointwiseSpec.zero_dim)
    same_dtype: tuple[tuple[str, bool], ...] = ()  # PointwiseSpec.same_dtype
    row_major: bool = False  # the result is row-major whatever the inputs' layout (ROW_MAJOR_RESULTS)

    @property
    def promote_positions(self) -> tuple[int, ...]:
        """Positions in `scalars` of the scalars that take part in type promotion."""
        return tuple(self.scalars.index(s) for s in self.promote_scalars)


def pointwise_kernel(f: NativeFunction, name: Callable[[str], str]) -> dict[str, Any]:
    """The PointwiseKernel fields of `f` (a functional op with a pointwise spec), arguments named by `name`;
    a backend context is built as `Context(**pointwise_kernel(f, name), ...its own fields)`."""
    spec = f.pointwise
    assert spec is not None
    return {
        "kernel": kernel_name(f),
        "op": f.func.name.name,
        "promote": spec.promote,
        "tensors": tuple(name(t) for t in spec.tensors),
        "scalars": tuple(name(s) for s in spec.scalars),
        "promote_scalars": tuple(name(s) for s in spec.promote_scalars),
        "inplace": f.group.inplace is not None,
        "conditions": tuple(name(t) for t in condition_tensors(spec)),
        "zero_dim": tuple(name(t) for t in spec.zero_dim),
        "same_dtype": tuple((name(t), always) for t, always in spec.same_dtype),
        "row_major": f.func.name.name in ROW_MAJOR_RESULTS,
    }


def numeric_defaults(f: NativeFunction) -> dict[str, float]:
    """The scalar arguments of `f`'s pointwise spec whose default is a finite number (the kernels' fast path
    folds them: kernel_spec.PointwiseSpec.specialize)."""
    spec = f.pointwise
    assert spec is not None
    out: dict[str, float] = {}
    for a in f.func.arguments.flat_non_out:
        if a.name in spec.scalars and a.default is not None:
            value = default_value(a)
            if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                out[a.name] = value
    return out
