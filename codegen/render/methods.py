"""generated/_methods.py: the Tensor methods and operators, installed on runtime.tensor.Tensor
(templates/methods.py.j2)."""

from __future__ import annotations

from dataclasses import dataclass

import jinja2

from codegen import api_python
from codegen.render import ops
from codegen.render.inputs import Inputs
from codegen.render.python_api import Docs


@dataclass(frozen=True)
class DirectMethod:
    """A varargs method that dispatches itself (Note [Direct method calls] in templates/methods.py.j2)."""

    op: str                     # the op id whose dispatch table it calls
    defaults: tuple[str, ...]   # the Python defaults of the op's arguments after the int list (keyword-only)


@dataclass(frozen=True)
class MethodsFile:
    methods: tuple[str, ...]           # the methods that call their op function (no varargs)
    varargs: dict[str, str]            # method -> its int-list argument, taken as varargs too
    direct: dict[str, DirectMethod]
    dunders: tuple[api_python.Dunder, ...]
    docs: Docs


def direct_methods(bindings: tuple[api_python.Binding, ...], ops_by_id: dict[str, ops.OpContext],
                   varargs: dict[str, str]) -> dict[str, DirectMethod]:
    """Varargs methods whose Python function is one plain dispatch of `(self, list)`, any further argument
    keyword-only with a default: no overload to choose, nothing mutated, one plain tensor. Name -> the op and
    those defaults; the generated method calls that op's dispatch table itself (Note [Direct method calls] in
    templates/methods.py.j2), passing the defaults."""
    out = {}
    for b in bindings:
        if b.name not in varargs or len(b.cases) != 1 or b.cases[0].condition or not b.cases[0].op:
            continue
        op = ops_by_id[b.cases[0].op]
        rest = b.params[2:]
        if not all(p.kwonly and p.default is not None and p.default != api_python.NOT_GIVEN for p in rest):
            continue
        if (tuple(p.name for p in b.params) == op.params and op.tensor_positions == (0,)
                and op.key_exprs == (f"{op.params[0]}._keys",) and not op.mutated and not op.return_type):
            out[b.name] = DirectMethod(op.id, tuple(str(p.default) for p in rest))
    return out


def contexts(inputs: Inputs) -> MethodsFile:
    api = inputs.api
    ops_by_id = {op.id: op for op in ops.op_contexts(inputs)}
    return MethodsFile(
        methods=tuple(m for m in api.method_names if m not in api.varargs), varargs=api.varargs,
        direct=direct_methods(api.bindings, ops_by_id, api.varargs),
        dunders=tuple(api_python.dunders(list(api.bindings))), docs=api.docs)


def render(env: jinja2.Environment, ctx: MethodsFile) -> dict[str, str]:
    return {"_methods.py": env.get_template("methods.py.j2").render(
        methods=ctx.methods, varargs=ctx.varargs, direct=ctx.direct, dunders=ctx.dunders, docs=ctx.docs)}
