"""Fusion: runs of consecutive pointwise nodes of one shape and floating dtype become one C++ loop.

Note [Fused pointwise kernels]
A node is fusible when its operator has a kernel spec (generated/_fusion_specs.py: the spec rendered to C++
by the generator's CUDA renderer), its output is float32 or float64 on the CPU, every tensor it reads has
that dtype and broadcasts to its output's shape, and its scalar arguments are numbers. A group is a
maximal run of consecutive fusible nodes (in execution order) with one output shape and dtype, so that no
other node can sit between two of its members. The group's kernel loops once over the output's elements:
each input is read at its own (compile-time constant) offset for the element, the members' expressions are
evaluated in order into locals of the dtype (rounded at every step, as eager execution rounds, and with
contraction into fused multiply-adds off), and only the values used after the group are stored. Scalars
are cast to the dtype, as the eager kernels treat a Python number.
A sum or mean (of all elements, or over the last dim) right after a group, of a value the group makes, with
no dtype argument, joins the group as its epilogue (a pointwise node alone followed by one makes a group
too): the loop runs over rows of the reduced dim, accumulates the value in double and stores one result
per row, so the summed expression never goes to memory unless a later step reads it. The sum's order is the
loop's, not NumPy's pairwise one (both round within the dtype's tolerance).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from runtime.compile.graph import Node, Value

CTYPE = {"float32": "float", "float64": "double"}


@dataclass(eq=False)
class FusedGroup:
    nodes: list[Node]
    shape: tuple[int, ...]
    dtype: Any
    inputs: list[Value] = field(default_factory=list)
    outputs: list[Value] = field(default_factory=list)
    entry: str = ""
    source: str = ""
    reduction: Node | None = None  # a sum or mean epilogue (Note [Fused pointwise kernels])
    inner: int = 0  # the elements each result of the reduction sums


def _broadcasts(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    if len(shape) > len(to):
        return False
    return all(a in (1, b) for a, b in zip(shape[::-1], to[::-1], strict=False))


def fusible(node: Node, specs: dict[str, Any], device: str = "cpu", dtypes: Any = CTYPE) -> bool:
    """`device`, `dtypes`: where the group's kernel runs and the dtypes it stores (cuda_fusion.py's for CUDA)."""
    spec = specs.get(node.name)
    if spec is None or len(node.outputs) != 1:
        return False
    out = node.outputs[0]
    if out.dtype.name not in dtypes or str(out.device) != device:
        return False
    tensors, scalars = spec[0], spec[1]
    names = _arg_names(node)
    if names is None:
        return False
    for name, arg in zip(names, node.args, strict=False):
        if name in tensors:
            if not isinstance(arg, Value) or arg.dtype is not out.dtype or str(arg.device) != device \
                    or not _broadcasts(arg.shape, out.shape):
                return False
        elif name in scalars and not isinstance(arg, bool | int | float):
            return False
    return True


def _arg_names(node: Node) -> list[str] | None:
    schema = str(node.op.schema)
    inner = schema[schema.index("(") + 1:schema.rindex(")", 0, schema.index("->"))]
    names = []
    for part in inner.split(","):
        part = part.strip()
        if not part or part == "*":
            continue
        names.append(part.split("=")[0].split()[-1])
    return names if len(names) >= len(node.args) else None


REDUCTIONS = ("sum", "sum.dim_IntList", "mean", "mean.dim")


def reduction_inner(node: Node, run: list[Node]) -> int:
    """How many elements each result of `node` sums when it can close `run` as its epilogue; 0 if it cannot."""
    if node.name not in REDUCTIONS or not run or len(node.outputs) != 1 or not node.args:
        return 0
    source, shape = node.args[0], run[0].outputs[0].shape
    if not isinstance(source, Value) or all(source.id != n.outputs[0].id for n in run):
        return 0
    out = node.outputs[0]
    if out.dtype is not source.dtype or node.args[-1] is not None:  # a dtype= argument: another dtype
        return 0
    numel = 1
    for s in shape:
        numel *= s
    if numel == 0:
        return 0
    if node.name in ("sum", "mean"):
        return numel
    dims = node.args[1]
    dims = [dims] if isinstance(dims, int) else list(dims) if isinstance(dims, list | tuple) else None
    if not shape or dims is None or len(dims) != 1 or not isinstance(dims[0], int) \
            or dims[0] % len(shape) != len(shape) - 1:
        return 0
    return shape[-1]


def groups(nodes: list[Node], specs: dict[str, Any], device: str = "cpu", dtypes: Any = CTYPE) \
        -> list[Node | FusedGroup]:
    """The nodes with each run of fusible ones replaced by a FusedGroup (runs of one node stay nodes), a
    reduction right after a run joining it (Note [Fused pointwise kernels])."""
    out: list[Node | FusedGroup] = []
    run: list[Node] = []

    def close(after: Node | None = None) -> bool:
        inner = reduction_inner(after, run) if after is not None else 0
        if len(run) >= 2 or (run and inner):
            out.append(FusedGroup(list(run), run[0].outputs[0].shape, run[0].outputs[0].dtype,
                                  reduction=after if inner else None, inner=inner))
        else:
            out.extend(run)
        run.clear()
        return bool(inner)

    for node in nodes:
        if fusible(node, specs, device, dtypes):
            o = node.outputs[0]
            if run and (o.shape != run[0].outputs[0].shape or o.dtype is not run[0].outputs[0].dtype):
                close()
            run.append(node)
        elif not close(node):
            out.append(node)
    close()
    return out


def _literal(x: Any, ctype: str) -> str:
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return f"static_cast<{ctype}>({x}LL)"
    return f"static_cast<{ctype}>({float(x).hex()})" if x == x and abs(x) != float("inf") else \
        (f"static_cast<{ctype}>(NAN)" if x != x else f"static_cast<{ctype}>({'-' if x < 0 else ''}INFINITY)")


def _offset(value: Value, shape: tuple[int, ...]) -> str:
    """C++ for the element offset of `value` at output element `i` (broadcast dims stride 0)."""
    numel = 1
    for s in value.shape:
        numel *= s
    if numel == 1:
        return "0"
    contiguous = []
    acc = 1
    for s in reversed(value.shape):
        contiguous.append(acc)
        acc *= s
    if value.shape == shape and tuple(contiguous[::-1]) == value.strides:
        return "i"
    pad = len(shape) - len(value.shape)
    strides = [0] * pad + [st if sz != 1 else 0 for sz, st in zip(value.shape, value.strides, strict=True)]
    terms = []
    inner = 1
    for dim in reversed(range(len(shape))):
        if strides[dim] and shape[dim] != 1:
            index = f"(i / {inner}LL)" if inner != 1 else "i"
            index = f"({index} % {shape[dim]}LL)" if dim > 0 else index
            terms.append(f"{index} * {strides[dim]}LL")
        inner *= shape[dim]
    return " + ".join(terms) or "0"


_ARG = re.compile(r"\ba_(\w+)\b")


def render(group: FusedGroup, entry: str, specs: dict[str, Any], used_later: set[int]) -> None:
    """Fill in the group's inputs, outputs, entry point and C++ source (Note [Fused pointwise kernels])."""
    ctype = CTYPE[group.dtype.name]
    produced = {v.id for n in group.nodes for v in n.outputs}
    inputs: list[Value] = []
    for n in group.nodes:
        for v in n.inputs():
            if v.id not in produced and all(v.id != w.id for w in inputs):
                inputs.append(v)
    outputs = [v for n in group.nodes for v in n.outputs if v.id in used_later]
    numel = 1
    for s in group.shape:
        numel *= s
    params = [f"const {ctype}* __restrict in{k}" for k in range(len(inputs))]
    params += [f"{ctype}* __restrict out{k}" for k in range(len(outputs))]
    red = group.reduction
    if red is not None:
        params.append(f"{ctype}* __restrict reduced")
    body = []
    local = {}
    for k, v in enumerate(inputs):
        local[v.id] = f"x{k}"
        body.append(f"    const {ctype} x{k} = in{k}[{_offset(v, group.shape)}];")
    for n in group.nodes:
        tensors, scalars, expr, _ = specs[n.name]
        names = _arg_names(n) or []
        values = dict(zip(names, n.args, strict=False))
        for name in (*tensors, *scalars):
            values.setdefault(name, None)

        def sub(m: re.Match[str], values: dict[str, Any] = values) -> str:
            arg = values.get(m.group(1))
            if isinstance(arg, Value):
                return local[arg.id]
            if arg is None:
                raise ValueError(f"argument {m.group(1)} has no value")
            return _literal(arg, ctype)

        out = n.outputs[0]
        local[out.id] = f"v{out.id}"
        body.append(f"    const {ctype} v{out.id} = static_cast<{ctype}>({_ARG.sub(sub, expr)});")
    for k, v in enumerate(outputs):
        body.append(f"    out{k}[i] = {local[v.id]};")
    group.inputs, group.outputs, group.entry = inputs, outputs, entry
    ops = ", ".join(n.name for n in group.nodes)
    if red is None:
        group.source = (f"// {ops}\n"
                        f'extern "C" void {entry}({", ".join(params)}) {{\n'
                        f"  for (long long i = 0; i < {numel}LL; ++i) {{\n"
                        + "\n".join("  " + line for line in body) + "\n  }\n}\n")
        return
    inner = group.inner
    rows = numel // inner
    total = f"acc / static_cast<double>({inner}LL)" if red.name.startswith("mean") else "acc"
    body.append(f"    acc += static_cast<double>({local[red.args[0].id]});")
    group.source = (f"// {ops}, then {red.name}\n"
                    f'extern "C" void {entry}({", ".join(params)}) {{\n'
                    f"  for (long long r = 0; r < {rows}LL; ++r) {{\n"
                    f"   double acc = 0.0;\n"
                    f"   for (long long i = r * {inner}LL; i < (r + 1) * {inner}LL; ++i) {{\n"
                    + "\n".join("   " + line for line in body) + "\n   }\n"
                    f"   reduced[r] = static_cast<{ctype}>({total});\n  }}\n}}\n")
