"""generated/_cpu_kernels.py: the NumPy kernels of the pointwise ops (templates/cpu_kernels.py.j2), their
expressions rendered from each op's kernel spec by the NumPy renderer of codegen/kernel_spec.py."""

from __future__ import annotations

from dataclasses import dataclass

import jinja2

from codegen.api_python import kernel_name, py_name
from codegen.kernel_spec import NUMPY, integer_divisors
from codegen.literals import python_number, python_str
from codegen.native import NativeFunction
from codegen.pointwise_kernel import PointwiseKernel, numeric_defaults, pointwise_kernel
from codegen.render import compound_pointwise
from codegen.render.inputs import Inputs
from codegen.render_errors import owned
from runtime.vocabulary import DTYPE_GROUPS, PromoteKind


@dataclass(frozen=True, kw_only=True)
class CpuKernelContext(PointwiseKernel):
    """One pointwise op's NumPy kernels (templates/cpu_kernels.py.j2): the shared facts (arguments by their
    Python parameter names) and what the NumPy kernels add."""

    params: tuple[str, ...]
    arrays: tuple[str, ...]  # the NumPy array of each tensor
    expr: str
    fast_condition: str  # scalars at their numeric defaults ...
    fast_expr: str | None  # ... and the expression folded for them (None: folding changes nothing)
    dtypes: tuple[str, ...] | None  # None: every dtype
    fast_set: str  # Note [Pointwise fast path] (runtime/kernels/cpu_pointwise.py): the dtypes computed directly
    follow: tuple[int, ...] = ()  # positions in `tensors` of the zero_dim ones: they take the result dtype
    divisors: tuple[str, ...] = ()  # integer divisors, rendered: checked for zero (kernel_spec.integer_divisors)
    compiled: bool = False  # a compound op: its compiled C++ kernel runs above a size (compound_pointwise.py)
    passes: int = 1  # the NumPy passes of the compiled kernel's op (the threshold is on elements x passes)


@dataclass(frozen=True)
class CpuKernelsFile:
    kernels: tuple[CpuKernelContext, ...]
    compiled_source: str = compound_pointwise.SOURCE  # the compound ops' C++, relative to generated/


def cpu_kernel_context(f: NativeFunction) -> CpuKernelContext:
    spec = f.pointwise
    assert spec is not None
    arrays = tuple(f"a{i}" for i in range(len(spec.tensors)))
    names = {t: a for t, a in zip(spec.tensors, arrays, strict=True)}
    names.update({s: py_name(s) for s in spec.scalars})
    all_dtypes = spec.dtypes == DTYPE_GROUPS["all"]
    defaults = numeric_defaults(f)
    expr = spec.render(NUMPY, names)
    fast = spec.specialize(defaults).render(NUMPY, names) if defaults else None
    return CpuKernelContext(
        **pointwise_kernel(f, py_name),
        params=tuple(py_name(a.name) for a in f.func.arguments.flat_non_out),
        arrays=arrays,
        expr=expr,
        fast_condition=" and ".join(f"{py_name(k)} == {python_number(v)}" for k, v in defaults.items()),
        fast_expr=fast if fast != expr else None,
        dtypes=None if all_dtypes else tuple(spec.dtypes),
        fast_set=("_NATIVE" if all_dtypes and spec.promote not in (PromoteKind.float, PromoteKind.int)
                  else f"_FAST_{kernel_name(f)}"),
        follow=tuple(spec.tensors.index(t) for t in spec.zero_dim),
        divisors=tuple(NUMPY.render(d, names) for d in integer_divisors(spec)),
        compiled=compound_pointwise.is_compiled(f),
        passes=compound_pointwise.numpy_passes(spec.specialize(numeric_defaults(f))),
    )


def contexts(inputs: Inputs) -> CpuKernelsFile:
    """The functional pointwise ops (their in-place and out= forms are kernels of the same context)."""
    return CpuKernelsFile(tuple(owned(cpu_kernel_context(f), f) for f in inputs.model.functions
                                if f.pointwise is not None and f.derived_from is None))


def render(env: jinja2.Environment, ctx: CpuKernelsFile) -> dict[str, str]:
    return {"_cpu_kernels.py": env.get_template("cpu_kernels.py.j2").render(
        kernels=ctx.kernels, compiled_source=python_str(ctx.compiled_source))}
