"""The groups of a CUDA graph: runs of consecutive pointwise nodes of one shape and dtype, with a following
sum or mean as their epilogue, the groups cuda_fusion.py renders (Note [Fused CUDA kernels]).

fusion.py's graph fusion (reductions over any dims, several phases per kernel, mixed dtypes, strided reads
at compile-time strides) is written for the CPU kernels of kernel_render.py; the CUDA renderer knows one
loop over elements with an optional row reduction over the last dim (or everything), so a CUDA graph forms
only those groups: a node is fusible when its operator has a kernel spec, its output is on the device in a
dtype the fused CUDA kernels store, every tensor it reads has that dtype and device and broadcasts to its
output's shape, and its scalars are numbers; a group is a maximal run of such nodes with one output shape
and dtype (so no other node sits between two members), and a sum or mean right after it, of a value the
run makes, with no dtype argument, over everything or the last dim, joins it as its epilogue.
"""

from __future__ import annotations

import math
from typing import Any

from runtime.compile.fusion import FusedGroup
from runtime.compile.graph import Node, Value

REDUCTIONS = ("sum", "sum.dim_IntList", "mean", "mean.dim")


def _broadcasts(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    if len(shape) > len(to):
        return False
    return all(a in (1, b) for a, b in zip(shape[::-1], to[::-1], strict=False))


def arg_names(node: Node) -> list[str] | None:
    """The names of the node's schema arguments, in order; None when the node has more arguments than that."""
    schema = str(node.op.schema)
    inner = schema[schema.index("(") + 1:schema.rindex(")", 0, schema.index("->"))]
    names = []
    for part in inner.split(","):
        part = part.strip()
        if not part or part == "*":
            continue
        names.append(part.split("=")[0].split()[-1])
    return names if len(names) >= len(node.args) else None


def fusible(node: Node, specs: dict[str, Any], device: str, dtypes: Any) -> bool:
    """Whether `node` can be a member of a run on `device` whose kernels store `dtypes` (names)."""
    spec = specs.get(node.name)
    if spec is None or len(node.outputs) != 1:
        return False
    out = node.outputs[0]
    if out.dtype.name not in dtypes or str(out.device) != device:
        return False
    tensors, scalars = spec[0], spec[1]
    names = arg_names(node)
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
    if math.prod(shape) == 0:
        return 0
    if node.name in ("sum", "mean"):
        return math.prod(shape)
    dims = node.args[1]
    dims = [dims] if isinstance(dims, int) else list(dims) if isinstance(dims, list | tuple) else None
    if not shape or dims is None or len(dims) != 1 or not isinstance(dims[0], int) \
            or dims[0] % len(shape) != len(shape) - 1:
        return 0
    return shape[-1]


def run_groups(nodes: list[Node], specs: dict[str, Any], device: str, dtypes: Any) -> list[Node | FusedGroup]:
    """The nodes with each run of fusible ones replaced by a FusedGroup (runs of one node stay nodes, unless a
    reduction closes them), a reduction right after a run joining it."""
    out: list[Node | FusedGroup] = []
    run: list[Node] = []

    def close(after: Node | None = None) -> bool:
        inner = reduction_inner(after, run) if after is not None else 0
        if len(run) >= 2 or (run and inner):
            nodes_ = [*run, after] if inner and after is not None else list(run)
            out.append(FusedGroup(nodes_, run[0].outputs[0].shape, run[0].outputs[0].dtype,
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
