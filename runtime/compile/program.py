"""A compiled graph ready to run: its steps (eager operator calls and fused kernels) in execution order."""

from __future__ import annotations

import ctypes
import importlib
from typing import Any

from runtime import opcall
from runtime.compile.cpp_build import build
from runtime.compile.fusion import FusedGroup, groups, render
from runtime.compile.graph import Graph, Node
from runtime.compile.passes import (
    common_subexpressions,
    dead_code_elimination,
    execution_order,
    fold_constants,
)
from runtime.compile.pyrun import make_runner
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
        self._run, self.source = make_runner(self.steps, graph.inputs, graph.output, self._calls)

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
        return self._run(inputs)
