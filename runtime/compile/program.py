"""A compiled graph ready to run: its steps (eager operator calls and fused kernels) in execution order."""

from __future__ import annotations

import ctypes
import importlib
from typing import Any

import numpy as np

from runtime import opcall
from runtime.compile.cpp_build import build
from runtime.compile.fusion import FusedGroup, groups, render
from runtime.compile.graph import Graph, Node, Value
from runtime.compile.lowering import lower
from runtime.compile.passes import (
    common_subexpressions,
    dead_code_elimination,
    execution_order,
    fold_constants,
)
from runtime.tensor import Tensor


def fusion_specs() -> dict[str, Any]:
    """generated/_fusion_specs.py's table, imported from the package that installed the op API (runtime
    code never names generated/: the package is the one `runtime.opcall` was given)."""
    package = opcall.api.__name__
    return importlib.import_module(f"{package}._fusion_specs").SPECS


class Program:
    """The optimised graph and how to run it."""

    def __init__(self, graph: Graph, results: dict[int, Any], fuse: bool) -> None:
        self.graph = graph
        self.stats = {"dead": dead_code_elimination(graph), "merged": common_subexpressions(graph),
                      "folded": fold_constants(graph, results)}
        dead_code_elimination(graph)
        execution_order(graph)
        self.steps: list[Node | FusedGroup] = groups(graph.nodes, fusion_specs()) if fuse \
            else list(graph.nodes)
        self.fused = [s for s in self.steps if isinstance(s, FusedGroup)]
        self.library: Any = None
        self._calls: dict[int, Any] = {}
        if self.fused:
            self._build()
        self._plans = {id(s): _plan(s) for s in self.steps if isinstance(s, Node)}

    def _build(self) -> None:
        later = self._used_after()
        specs = fusion_specs()
        for k, group in enumerate(self.fused):
            render(group, f"opgen_fused_{k}", specs, later[id(group)])
        self.library = build("\n".join(g.source for g in self.fused))
        for group in self.fused:
            fn = getattr(self.library, group.entry)
            fn.restype = None
            fn.argtypes = [ctypes.c_void_p] * (len(group.inputs) + len(group.outputs)
                                               + (group.reduction is not None))
            self._calls[id(group)] = fn

    def _used_after(self) -> dict[int, set[int]]:
        """For each fused group, the ids of its values read by a later step or returned."""
        out: dict[int, set[int]] = {}
        needed = {v.id for v in self.graph.output_values()}
        for step in reversed(self.steps):
            if isinstance(step, FusedGroup):
                if step.reduction is not None:  # the group makes its reduction's input itself
                    needed.discard(step.reduction.outputs[0].id)
                out[id(step)] = {v.id for n in step.nodes for v in n.outputs} & needed
                inside = {v.id for n in step.nodes for v in n.outputs}
                needed |= {v.id for n in step.nodes for v in n.inputs() if v.id not in inside}
            else:
                needed |= {v.id for v in step.inputs()}
        return out

    def kernel_source(self) -> str:
        return "\n".join(g.source for g in self.fused)

    # -- running ------------------------------------------------------------------------------------
    def run(self, inputs: list[Tensor]) -> Any:
        env: dict[int, Any] = {v.id: t for v, t in zip(self.graph.inputs, inputs, strict=True)}
        for step in self.steps:
            if isinstance(step, FusedGroup):
                self._run_group(step, env)
            else:
                self._plans[id(step)](env)
        return _materialize(self.graph.output, env)

    def _run_group(self, group: FusedGroup, env: dict[int, Any]) -> None:
        ins = [_get(v, env) for v in group.inputs]
        if not all(tuple(t.shape) == v.shape and (t.numel() <= 1 or tuple(t.stride()) == v.strides)
                   and t._data.dtype == t.dtype.np for t, v in zip(ins, group.inputs, strict=True)):
            for node in group.nodes:  # another layout than at capture: the eager kernels
                _run_node(node, env)
            if group.reduction is not None:
                _run_node(group.reduction, env)
            return
        outs = [np.empty(group.shape, dtype=group.dtype.np) for _ in group.outputs]
        if group.reduction is not None:
            reduced = group.reduction.outputs[0]
            outs.append(np.empty(reduced.shape, dtype=group.dtype.np))
        pointers = [t._data.__array_interface__["data"][0] for t in ins] + \
            [a.__array_interface__["data"][0] for a in outs]
        self._calls[id(group)](*pointers)
        for v, a in zip(group.outputs, outs, strict=False):
            env[v.id] = Tensor._wrap(a, group.dtype)
        if group.reduction is not None:
            env[reduced.id] = Tensor._wrap(outs[-1], group.dtype)


def _get(v: Value, env: dict[int, Any]) -> Any:
    if v.external is not None:
        return v.external
    return env[v.id]


def _resolve(x: Any, env: dict[int, Any]) -> Any:
    if isinstance(x, Value):
        return _get(x, env)
    if isinstance(x, list | tuple):
        return type(x)(_resolve(a, env) for a in x)
    if isinstance(x, dict):
        return {k: _resolve(v, env) for k, v in x.items()}
    return x


def _run_node(node: Node, env: dict[int, Any]) -> None:
    result = node.op.call(*_resolve(node.args, env))
    outs = [result] if node.result_kind == "tensor" else list(result)
    for v, t in zip(node.outputs, outs, strict=True):
        env[v.id] = t


def _plan(node: Node) -> Any:
    """A function running `node` on an environment: its arguments with the values' slots filled in (the
    boxed op's call without walking the argument structure; arguments holding lists of values take the
    general path)."""
    if any(isinstance(a, list | tuple | dict) and any(isinstance(b, Value) for b in _flatten(a)) for a in node.args):
        return lambda env: _run_node(node, env)
    lowered = lower(node)
    if lowered is not None:
        return _lowered_plan(node, lowered)
    template = list(node.args)
    slots = [(i, a) for i, a in enumerate(template) if isinstance(a, Value)]
    free = [(i, a.external) for i, a in slots if a.external is not None]
    bound = [(i, a.id) for i, a in slots if a.external is None]
    for i, t in free:
        template[i] = t
    call = node.op.call
    outs = [v.id for v in node.outputs]
    single = node.result_kind == "tensor"

    def run(env: dict[int, Any]) -> None:
        args = template.copy()
        for i, vid in bound:
            args[i] = env[vid]
        result = call(*args)
        if single:
            env[outs[0]] = result
        else:
            for vid, t in zip(outs, result, strict=True):
                env[vid] = t
    return run


def _lowered_plan(node: Node, fn: Any) -> Any:
    """`_plan` of a node that runs as a NumPy expression on the arrays (Note [Lowered nodes])."""
    template = list(node.args)
    slots = [(i, a) for i, a in enumerate(template) if isinstance(a, Value)]
    free = [(i, a.external) for i, a in slots if a.external is not None]
    bound = [(i, a.id) for i, a in slots if a.external is None]
    out, dtype = node.outputs[0].id, node.outputs[0].dtype
    wrap = Tensor._wrap

    def run(env: dict[int, Any]) -> None:
        args = template.copy()
        for i, t in free:
            args[i] = t._data
        for i, vid in bound:
            args[i] = env[vid]._data
        env[out] = wrap(fn(args), dtype)
    return run


def _flatten(x: Any) -> list[Any]:
    if isinstance(x, list | tuple):
        return [b for a in x for b in _flatten(a)]
    if isinstance(x, dict):
        return [b for a in x.values() for b in _flatten(a)]
    return [x]


def _materialize(x: Any, env: dict[int, Any]) -> Any:
    return _resolve(x, env)
