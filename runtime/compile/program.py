"""A compiled graph ready to run: its steps (eager operator calls and fused kernels) in execution order."""

from __future__ import annotations

import ctypes
import importlib
from typing import Any

import numpy as np

from runtime import opcall
from runtime.compile.cpp_build import build
from runtime.compile.cuda_fusion import CudaKernels, cuda_groups, graph_device
from runtime.compile.fusion import FusedGroup, groups
from runtime.compile.graph import Graph, Node, Value
from runtime.compile.kernel_render import render
from runtime.compile.passes import (
    common_subexpressions,
    dead_code_elimination,
    execution_order,
    fold_constants,
)
from runtime.tensor import Tensor
from runtime.threads import kernel_threads

# Note [Threads of fused kernels]
# A fused kernel splits its loop over OpenMP threads (rows for a kernel with row values, the flat element
# range otherwise) when its work (domain elements times passes over them) is at least THREAD_THRESHOLD and
# it has no scatter accumulation; it uses runtime.threads.kernel_threads() threads (G.set_num_threads,
# else OMP_NUM_THREADS or OPENBLAS_NUM_THREADS, else the CPU count), so OPENBLAS_NUM_THREADS=1 keeps it on
# one thread. Measured with `python3 bench/bench_compile.py --threads` (the GELU-residual and a row softmax
# at 2^12..2^20 elements, one thread against two, in one run) on the 2-core build machine under a load
# average of about 17: two threads lost at every size (about 30 ms per call, the second thread waiting for
# a time slice; 1.7x slower even at 2^20), so no crossover could be measured there. The threshold is set
# where one thread takes about 0.5 ms (2^18 elements of the GELU-residual: 0.53 ms in that run), so that
# on an idle machine, where starting a team costs tens of microseconds, a split never costs more than a
# few percent; rerun the bench on the target machine to move it.
THREAD_THRESHOLD = 1 << 18


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
        self.device = graph_device(graph)  # a CUDA graph's fused groups: cuda_fusion.py
        self.cuda: CudaKernels | None = None
        self.steps: list[Node | FusedGroup] = list(graph.nodes) if not fuse else \
            groups(graph.nodes, fusion_specs()) if self.device is None else \
            cuda_groups(graph.nodes, fusion_specs(), self.device)
        self.fused = [s for s in self.steps if isinstance(s, FusedGroup)]
        self.library: Any = None
        self._calls: dict[int, Any] = {}
        self._runners: dict[int, Any] = {}
        if self.fused:
            self._build()
        self._plans = {id(s): _plan(s) for s in self.steps if isinstance(s, Node)}

    def _build(self) -> None:
        later = self._used_after()
        if self.device is not None:
            self.cuda = CudaKernels(self.fused, later, fusion_specs(), self.device)
            for group in self.fused:
                self._runners[id(group)] = self._cuda_runner(group, self.cuda)
            return
        for k, group in enumerate(self.fused):
            render(group, f"opgen_fused_{k}", later[id(group)])
        self.library = build("\n".join(g.source for g in self.fused))
        for group in self.fused:
            fn = getattr(self.library, group.entry)
            fn.restype = ctypes.c_int
            fn.argtypes = [ctypes.c_void_p] * (len(group.inputs) + len(group.outputs)) + [ctypes.c_longlong]
            self._calls[id(group)] = fn
            self._runners[id(group)] = self._runner(group, fn)

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
        env: dict[int, Any] = {v.id: t for v, t in zip(self.graph.inputs, inputs, strict=True)}
        for step in self.steps:
            if isinstance(step, FusedGroup):
                self._runners[id(step)](env)
            else:
                self._plans[id(step)](env)
        return _materialize(self.graph.output, env)

    def _runner(self, group: FusedGroup, fn: Any) -> Any:
        """A function running the group's kernel on an environment: the inputs checked against the layout
        the kernel was written for by their arrays' shapes, byte strides and dtypes (the careful check of
        `_run_group` only when those differ)."""
        expected = [(v.id, v.external, v.shape, tuple(s * v.dtype.itemsize for s in v.strides), v.dtype.np)
                    for v in group.inputs]
        outs = [(v.id, v.shape, v.dtype.np, v.dtype) for v in group.outputs]
        parallel = group.parallel and group.work >= THREAD_THRESHOLD
        empty, wrap = np.empty, Tensor._wrap

        def run(env: dict[int, Any]) -> None:
            pointers = []
            for vid, external, shape, strides, npd in expected:
                a = (external if external is not None else env[vid])._data
                if a.shape != shape or a.strides != strides or a.dtype != npd:
                    self._run_group(group, env)
                    return
                pointers.append(a.__array_interface__["data"][0])
            arrays = [empty(shape, npd) for _, shape, npd, _ in outs]
            pointers += [a.__array_interface__["data"][0] for a in arrays]
            if fn(*pointers, kernel_threads() if parallel else 1) != 0:
                self._run_eagerly(group, env)  # an index out of range: the eager kernels raise their error
                return
            for (vid, _, _, dtype), a in zip(outs, arrays, strict=True):
                env[vid] = wrap(a, dtype)
        return run

    @classmethod
    def _cuda_runner(cls, group: FusedGroup, cuda: CudaKernels) -> Any:
        """A function launching a CUDA group's kernels; its nodes' kernels where they refuse the inputs."""
        def run(env: dict[int, Any]) -> None:
            if not cuda.run(group, [_get(v, env) for v in group.inputs], env):
                cls._run_eagerly(group, env)
        return run

    def _run_group(self, group: FusedGroup, env: dict[int, Any]) -> None:
        ins = [_get(v, env) for v in group.inputs]
        if not all(tuple(t.shape) == v.shape and _same_strides(t, v) and t.dtype is v.dtype
                   and t._data.dtype == t.dtype.np for t, v in zip(ins, group.inputs, strict=True)):
            self._run_eagerly(group, env)  # another layout than at capture: the eager kernels
            return
        outs = [np.empty(v.shape, dtype=v.dtype.np) for v in group.outputs]
        pointers = [t._data.__array_interface__["data"][0] for t in ins] + \
            [a.__array_interface__["data"][0] for a in outs]
        threads = kernel_threads() if group.parallel and group.work >= THREAD_THRESHOLD else 1
        if self._calls[id(group)](*pointers, threads) != 0:
            self._run_eagerly(group, env)  # an index out of range: the eager kernels raise their error
            return
        for v, a in zip(group.outputs, outs, strict=True):
            env[v.id] = Tensor._wrap(a, v.dtype)

    @staticmethod
    def _run_eagerly(group: FusedGroup, env: dict[int, Any]) -> None:
        for node in group.nodes:
            _run_node(node, env)


def _same_strides(t: Tensor, v: Value) -> bool:
    """The tensor's strides are the value's where they matter (dims of size 1 are never stepped)."""
    return all(a == b for a, b, n in zip(t.stride(), v.strides, v.shape, strict=True) if n != 1)


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


def _flatten(x: Any) -> list[Any]:
    if isinstance(x, list | tuple):
        return [b for a in x for b in _flatten(a)]
    if isinstance(x, dict):
        return [b for a in x.values() for b in _flatten(a)]
    return [x]


def _materialize(x: Any, env: dict[int, Any]) -> Any:
    return _resolve(x, env)
