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
