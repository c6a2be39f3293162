"""generated/_ops.py: one Python function per op name (its overloads chosen by argument types) and each
operator's dispatch (templates/ops.py.j2)."""

from __future__ import annotations

from dataclasses import dataclass

import jinja2

from codegen import api_python
from codegen.api_python import key_expr, op_id, py_name
from codegen.literals import python_str, python_value
from codegen.model import Argument
from codegen.native import NativeFunction
from codegen.render.inputs import Inputs
from codegen.render.python_api import Docs
from codegen.render_errors import owned


@dataclass(frozen=True)
class OpContext:
    """One operator of generated/_ops.py (templates/ops.py.j2)."""

    id: str
    name: str
    schema: str  # a Python string literal (Note [Text into code only through one door] in codegen/literals.py)
    params: tuple[str, ...]
    tensor_positions: tuple[int, ...]
    mixed_devices: bool
    scalar_positions: tuple[int, ...]  # Note [CPU scalars beside device tensors] (runtime/dispatcher.py)
    key_exprs: tuple[str, ...]
    mutated: tuple[str, ...]
    return_type: str
    number_self: bool = False  # Note [A Python number as self]


# Note [A Python number as self]
# PyTorch's Python binding takes a number for the Tensor `self` of these ops (`torch.add(2, t)`,
# `torch.pow(2, t)`): its arithmetic ops accept numbers as tensors, the others have Scalar-self overloads
# (`pow.Scalar`, `remainder.Scalar_Tensor`, `bitwise_and.Scalar_Tensor`, `isin.Scalar_Tensor`, ...). opgen's
# operator of a Tensor `self` takes the number as a wrapped-number tensor (which promotes as a Python scalar
# does). The check sits in the dispatch's `except AttributeError` branch, the one a non-tensor reaches, so a
# call with tensors pays nothing for it. Any other op still refuses a number there, as PyTorch's does.
NUMBER_SELF_OPS = frozenset({
    "add", "sub", "mul", "div", "true_divide", "floor_divide", "multiply", "subtract", "divide", "pow",
    "remainder", "xlogy", "bitwise_and", "bitwise_or", "bitwise_xor", "bucketize", "isin",
})


@dataclass(frozen=True)
class OpsFile:
    ops: tuple[OpContext, ...]
    bindings: tuple[api_python.Binding, ...]
    exported: tuple[api_python.Binding, ...]
    docs: Docs

    @property
    def ops_by_id(self) -> dict[str, OpContext]:
        return {op.id: op for op in self.ops}


def _writes(a: Argument) -> bool:
    return a.annotation is not None and a.annotation.is_write


def op_context(f: NativeFunction) -> OpContext:
    args = f.func.arguments.flat_all
    positions = tuple(i for i, a in enumerate(args) if a.type.is_tensor_like())
    return OpContext(
        id=op_id(f),
        name=f.name,
        schema=python_str(str(f.func), '"'),
        params=tuple(py_name(a.name) for a in args),
        tensor_positions=positions,
        mixed_devices=f.mixed_devices,
        # a pointwise op takes 0-dim CPU tensors among device tensors as inputs, as PyTorch's TensorIterator
        scalar_positions=tuple(i for i in positions if f.pointwise is not None and not _writes(args[i])),
        key_exprs=tuple(key_expr(args[i]) for i in positions),
        mutated=tuple(py_name(a.name) for a in args if _writes(a)),
        return_type=_return_type(f),
        number_self=(f.func.name.name in NUMBER_SELF_OPS and bool(args) and str(args[0].type) == "Tensor"
                     and not _writes(args[0]) and any(str(a.type) == "Tensor" for a in args[1:])),
    )


def _return_type(f: NativeFunction) -> str:
    """`("max", ("values", "indices"))` for an op returning several named values (runtime/return_types.py)."""
    rets = f.func.returns
    if len(rets) < 2 or any(r.name is None for r in rets) or f.func.name.name.endswith("_"):
        return ""
    return python_value((f.func.name.name, tuple(r.name for r in rets)))


def op_contexts(inputs: Inputs) -> tuple[OpContext, ...]:
    return tuple(owned(op_context(f), f) for f in inputs.model.functions)


def contexts(inputs: Inputs) -> OpsFile:
    api = inputs.api
    return OpsFile(op_contexts(inputs), api.bindings, api.exported, api.docs)


def render(env: jinja2.Environment, ctx: OpsFile) -> dict[str, str]:
    return {"_ops.py": env.get_template("ops.py.j2").render(
        ops=ctx.ops, ops_by_id=ctx.ops_by_id, bindings=ctx.bindings, exported=ctx.exported, docs=ctx.docs)}
