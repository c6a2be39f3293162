"""The graph that `G.compile` captures: values (tensors flowing between operators) and nodes (one call of
an operator of native_functions.yaml each), in the order the program ran them."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any


@dataclass(eq=False)
class Value:
    """A tensor of the graph: an input of the function, an output of a node, or a free tensor the function
    read (a parameter, a global: `external`, read again at every run)."""

    id: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: Any
    device: Any
    producer: Node | None = None
    external: Any = None  # the Tensor object of a free value

    @property
    def name(self) -> str:
        if self.producer is None:
            return f"c{self.id}" if self.external is not None else f"x{self.id}"
        return f"v{self.id}"

    def describe(self) -> str:
        dims = ",".join(str(s) for s in self.shape)
        return f"{self.dtype.name}[{dims}]" + ("" if str(self.device) == "cpu" else f" {self.device}")


@dataclass(eq=False)
class Node:
    """One operator call: `op` is the dispatcher's Operator, `args` its boxed arguments in schema order
    with Values in place of tensors (lists of them for Tensor[] arguments), `outputs` what it returned."""

    op: Any
    args: tuple[Any, ...]
    outputs: tuple[Value, ...]
    result_kind: str = "tensor"  # "tensor", "tuple" or "list": how the op returned `outputs`

    @property
    def name(self) -> str:
        return str(self.op.name)

    def inputs(self) -> list[Value]:
        return [v for v in _flat(self.args) if isinstance(v, Value)]


def leaves(x: Any, kind: type) -> list[Any]:
    """The instances of `kind` in `x`, in order: `x` itself, or what its lists, tuples and dicts nest."""
    if isinstance(x, kind):
        return [x]
    if isinstance(x, list | tuple):
        return [v for a in x for v in leaves(a, kind)]
    if isinstance(x, dict):
        return [v for a in x.values() for v in leaves(a, kind)]
    return []


def same_kind(x: list[Any] | tuple[Any, ...], items: list[Any]) -> Any:
    """A list or tuple of `x`'s type holding `items` (a named tuple takes them as arguments)."""
    return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)


def _flat(args: Any) -> list[Any]:
    out: list[Any] = []
    for a in args:
        if isinstance(a, list | tuple):
            out.extend(_flat(a))
        elif isinstance(a, dict):
            out.extend(_flat(list(a.values())))
        else:
            out.append(a)
    return out


def _show(arg: Any) -> str:
    if isinstance(arg, Value):
        return arg.name
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}={_show(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, list | tuple):
        inner = ", ".join(_show(a) for a in arg)
        return f"[{inner}]" if isinstance(arg, list) else f"({inner}{',' if len(arg) == 1 else ''})"
    return repr(arg)


@dataclass(eq=False)
class Graph:
    inputs: list[Value] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    output: Any = None  # the function's return structure, with Values in place of tensors
    _ids: Any = field(default_factory=lambda: itertools.count())

    def new_value(self, shape: tuple[int, ...], strides: tuple[int, ...], dtype: Any, device: Any,
                  producer: Node | None = None, external: Any = None) -> Value:
        return Value(next(self._ids), shape, strides, dtype, device, producer, external)

    def externals(self) -> list[Value]:
        seen: dict[int, Value] = {}
        for node in self.nodes:
            for v in node.inputs():
                if v.external is not None:
                    seen.setdefault(v.id, v)
        return list(seen.values())

    def output_values(self) -> list[Value]:
        return [v for v in _flat([self.output]) if isinstance(v, Value)]

    def __str__(self) -> str:
        params = ", ".join(f"{v.name}: {v.describe()}" for v in self.inputs)
        lines = [f"graph({params}):"]
        for v in self.externals():
            lines.append(f"    {v.name}: {v.describe()} = <tensor read from the program>")
        for node in self.nodes:
            outs = ", ".join(v.name for v in node.outputs) or "_"
            shapes = ", ".join(v.describe() for v in node.outputs)
            lines.append(f"    {outs} = {node.name}({', '.join(_show(a) for a in node.args)})  # {shapes}")
        lines.append(f"    return {_show(self.output) if not isinstance(self.output, Value) else self.output.name}")
        return "\n".join(lines)

    def to_dot(self) -> str:
        """The graph as Graphviz text (`dot -Tsvg`): values are ellipses, operators boxes."""
        lines = ["digraph G {", "  rankdir=TB;", '  node [fontname="monospace"];']
        for v in self.inputs + self.externals():
            lines.append(f'  {v.name} [label="{v.name}\\n{v.describe()}", shape=ellipse];')
        for i, node in enumerate(self.nodes):
            lines.append(f'  n{i} [label="{node.name}", shape=box];')
            for v in node.inputs():
                lines.append(f"  {v.name} -> n{i};")
            for v in node.outputs:
                lines.append(f'  {v.name} [label="{v.name}\\n{v.describe()}", shape=ellipse];')
                lines.append(f"  n{i} -> {v.name};")
        lines.append('  out [label="return", shape=plaintext];')
        for v in self.output_values():
            lines.append(f"  {v.name} -> out;")
        lines.append("}")
        return "\n".join(lines)
