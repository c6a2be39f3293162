"""generated/_meta_kernels.py: the Meta kernels of the pointwise ops (templates/meta_kernels.py.j2), which
compute an output's shape, strides and dtype and no values (Note [Meta tensors] in runtime/meta_array.py).
They make the CPU kernels' checks (conditions, 0-d and same-dtype operands, `alpha`) and ask the CPU
kernels' promotion, so a meta result has exactly the dtype the CPU kernel gives."""

from __future__ import annotations

from dataclasses import dataclass

import jinja2

from codegen.api_python import py_name
from codegen.native import NativeFunction
from codegen.pointwise_kernel import PointwiseKernel, pointwise_kernel
from codegen.render.inputs import Inputs
from codegen.render_errors import owned
from runtime.vocabulary import DTYPE_GROUPS


@dataclass(frozen=True, kw_only=True)
class MetaKernelContext(PointwiseKernel):
    """One pointwise op's Meta kernels: the shared facts (arguments by their Python parameter names) and the
    parameters, the dtypes it accepts and the zero_dim positions that follow the result dtype."""

    params: tuple[str, ...]
    dtypes: tuple[str, ...] | None  # None: every dtype
    follow: tuple[int, ...] = ()
    checks_alpha: bool = False


@dataclass(frozen=True)
class MetaKernelsFile:
    kernels: tuple[MetaKernelContext, ...]


def meta_kernel_context(f: NativeFunction) -> MetaKernelContext:
    spec = f.pointwise
    assert spec is not None
    params = tuple(py_name(a.name) for a in f.func.arguments.flat_non_out)
    all_dtypes = spec.dtypes == DTYPE_GROUPS["all"]
    return MetaKernelContext(
        **pointwise_kernel(f, py_name),
        params=params,
        dtypes=None if all_dtypes else tuple(spec.dtypes),
        follow=tuple(spec.tensors.index(t) for t in spec.zero_dim),
        checks_alpha="alpha" in params and (all_dtypes or "int64" in spec.dtypes),
    )


def contexts(inputs: Inputs) -> MetaKernelsFile:
    """The functional pointwise ops (their in-place and out= forms are kernels of the same context)."""
    return MetaKernelsFile(tuple(owned(meta_kernel_context(f), f) for f in inputs.model.functions
                                 if f.pointwise is not None and f.derived_from is None))


def render(env: jinja2.Environment, ctx: MetaKernelsFile) -> dict[str, str]:
    return {"_meta_kernels.py": env.get_template("meta_kernels.py.j2").render(kernels=ctx.kernels)}
