"""A compiled graph ready to run: its steps (eager operator calls and fused kernels) in execution order."""

from __future__ import annotations

import ctypes
import functools
import importlib
from typing import Any

from runtime import opcall
from runtime.compile.cpp_build import build
from runtime.compile.cuda_fusion import CudaKernels, cuda_groups, graph_device
from runtime.compile.fusion import FusedGroup, groups
from runtime.compile.graph import Graph, Node
from runtime.compile.kernel_render import render
from runtime.compile.passes import (
    common_subexpressions,
    dead_code_elimination,
    execution_order,
    fold_constants,
    simplify_views,
)
from runtime.compile.pyrun import cuda_group_runner, group_runner, make_runner, private_values
from runtime.compile.thread_split import SIZES, split_threads
from runtime.dispatcher import AUTOGRAD_BIT, tls
from runtime.tensor import Tensor

# Note [Buffers a program keeps]
# A fused kernel writes into arrays it is given. An output that never leaves the program (not returned, not
# saved for a backward, read only by later kernels and by lowered NumPy nodes that make new arrays: pyrun.
# private_values) is written into a buffer the program keeps between runs, in its arena (one list of
# arrays, made on the first run), so a steady training loop does not ask the allocator for fresh multi-MB
# arrays at every step: on a machine where fresh pages fault (glibc returns large blocks to the system and
# each first touch of a page traps), that cost more than the kernels (the transformer block's GELU backward:
# about 1200 page faults per call). Each value keeps its own buffer (no sharing between values whose lives
# do not overlap), so a program holds its private intermediates' bytes while it lives, as a caching
# allocator would. An arena serves one run at a time: the generated function takes one from the program's
# pool (or makes one) and puts it back when it returns, so runs in other threads or nested runs each use
# their own. Values an operator call reads are never kept: the operator may hold or alias its argument.
KEEP_BUFFERS = True
SPLIT_MIN = SIZES[0]  # a smaller kernel never splits (Note [Threads of fused kernels])


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
                      "folded": fold_constants(graph, results), "views": simplify_views(graph)}
        dead_code_elimination(graph)
        execution_order(graph)
        self.device = graph_device(graph)  # a CUDA graph's fused groups: cuda_fusion.py
        self.cuda: CudaKernels | None = None
        self.steps: list[Node | FusedGroup] = list(graph.nodes) if not fuse else \
            groups(graph.nodes, fusion_specs()) if self.device is None else \
            cuda_groups(graph.nodes, fusion_specs(), self.device)
        self.fused = [s for s in self.steps if isinstance(s, FusedGroup)]
        self.library: Any = None
        self._calls: dict[int, Any] = {}
        self._runners: dict[int, tuple[Any, bool]] = {}  # group -> its runner, and whether it takes arrays
        self.slots: dict[int, int] = {}  # value id -> its buffer in the arena (Note [Buffers a program keeps])
        if self.fused:
            self._build()
        self._run, self.source = make_runner(self.steps, graph.inputs, graph.output, self._runners,
                                             len(self.slots))

    def _build(self) -> None:
        later = self._used_after()
        if self.device is not None:
            self.cuda = CudaKernels(self.fused, later, self.device)
            for group in self.fused:
                self._runners[id(group)] = (cuda_group_runner(group, self.cuda), False)
            return
        for k, group in enumerate(self.fused):
            render(group, f"opgen_fused_{k}", later[id(group)])
        self.library = build("\n".join(g.source for g in self.fused))
        if KEEP_BUFFERS:
            self.slots = {v.id: k for k, v in enumerate(private_values(self.steps, self.graph.output))}
        for group in self.fused:
            fn = getattr(self.library, group.entry)
            fn.restype = ctypes.c_int
            fn.argtypes = [ctypes.c_void_p] * (len(group.inputs) + len(group.outputs)) + [ctypes.c_longlong]
            self._calls[id(group)] = fn
            slots = [self.slots.get(v.id) for v in group.outputs]
            # the thread count is looked up at each run (G.set_num_threads may change it): Note [Threads of
            # fused kernels] in thread_split.py
            threads = functools.partial(split_threads, group.work) if group.parallel and group.work >= SPLIT_MIN \
                else None
            inputs = [self.slots.get(v.id) for v in group.inputs]
            self._runners[id(group)] = (group_runner(group, fn, threads, slots, inputs), True)

    def _used_after(self) -> dict[int, set[int]]:
        """For each fused group, the ids of its values read by a later step or returned."""
        out: dict[int, set[int]] = {}
        needed = {v.id for v in self.graph.output_values()}
        for step in reversed(self.steps):
            if isinstance(step, FusedGroup):
                inside = {v.id for n in step.nodes for v in n.outputs}
                out[id(step)] = inside & needed
                needed |= {v.id for n in step.nodes for v in n.inputs() if v.id not in inside}
            else:
                needed |= {v.id for v in step.inputs()}
        return out

    def kernel_source(self) -> str:
        if self.cuda is not None:
            return self.cuda.source
        return "\n".join(g.source for g in self.fused)

    # -- running ------------------------------------------------------------------------------------
    def run(self, inputs: list[Tensor]) -> Any:
        return self._run(inputs)

    def run_without_grad(self, inputs: list[Tensor]) -> Any:
        """`run` with grad mode off (no_grad's effect, switched inline: this is on every compiled call)."""
        enabled = tls.mask & AUTOGRAD_BIT
        if not enabled:
            return self._run(inputs)
        tls.mask &= ~AUTOGRAD_BIT
        try:
            return self._run(inputs)
        finally:
            tls.mask |= AUTOGRAD_BIT
