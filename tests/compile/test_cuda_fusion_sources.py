"""G.compile's fused CUDA kernels without a GPU: NVRTC compiles every source runtime/compile/cuda_fusion.py
renders, for float32, float64, float16 and bfloat16, to a cubin for sm_90 with no error and no warning, and
every kernel the source declares is in the cubin (Note [Fused CUDA kernels]).

The groups come from graphs captured on the CPU: a CUDA graph forms the same groups (fusion.groups with the
device), and the source holds no shape or stride, so it is the source the same graph makes on a device.
One more group chains every op whose per-op CUDA kernel maps the dtype to itself, so that every spec's C++
is compiled inside a fused kernel, for float32 and float64 (float16 and bfloat16 compute in float: their
kernels differ from float32's only in the loads, stores and casts, which the sample graphs compile). Never
skipped: NVRTC is part of the `dev` install, as in tests/cuda/test_nvrtc_compiles_every_kernel.py, whose
records of clean compiles this test shares.
"""

from __future__ import annotations

import dataclasses
import re
import types
from collections.abc import Callable
from typing import Any

import pytest

import generated as G
from runtime.compile import cuda_fusion
from runtime.compile.capture import capture, capture_joint
from runtime.compile.fusion import FusedGroup
from runtime.compile.graph import Graph, Node
from runtime.compile.program import Program, fusion_specs
from runtime.cuda import nvrtc_check
from runtime.cuda.compile import headers_digest
from runtime.cuda.pointwise import PointwiseKernel
from runtime.dispatcher import dispatcher
from tests.cuda.test_nvrtc_compiles_every_kernel import CHECK_OPTIONS as FAST
from tests.cuda.test_nvrtc_compiles_every_kernel import _read_record, _record_path, _write_record

ENTRY = re.compile(r'extern "C" __global__ void (\w+)\(')
CUBIN_ENTRY = re.compile(rb"\.text\.(\w+)\x00")
DTYPES = {"float32": G.float32, "float64": G.float64, "float16": G.float16, "bfloat16": G.bfloat16}


def gelu_residual(x: G.Tensor) -> G.Tensor:
    return 0.5 * x * (1 + G.tanh(0.7978845608 * (x + 0.044715 * x * x * x))) * 1.5 + x


def broadcasting(x: G.Tensor, b: G.Tensor) -> Any:
    y = G.sigmoid(x * 2 + b) - b * x
    return y, G.exp(y).clamp(-1.0, 3.0) / 7


def epilogues(x: G.Tensor, b: G.Tensor) -> Any:
    e = G.exp(x * 0.5 + b) - x
    return e.sum(-1), e, (G.tanh(x) * x).mean(), (x - b).mean(1, keepdim=True)


def with_matmul(x: G.Tensor, w: G.Tensor, b: G.Tensor) -> G.Tensor:
    h = G.nn.functional.gelu(x @ w + b)
    return G.softmax(h * 0.5 + 1, -1) * 3 - h


def _groups(graph: Graph, results: dict[int, Any]) -> tuple[Program, list[Node | FusedGroup]]:
    program = Program(graph, results, False)  # the passes, not the CPU kernels
    steps = cuda_fusion.cuda_groups(program.graph.nodes, fusion_specs(), "cpu")
    return program, steps


def captured_groups() -> list[tuple[list[FusedGroup], dict[int, set[int]]]]:
    """(groups, the values each stores) of the sample graphs, forward and (for a training one) backward."""
    x, b, w = G.randn(6, 8), G.randn(8), G.randn(8, 8)
    graphs: list[tuple[Graph, dict[int, Any]]] = []
    cases: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
        (gelu_residual, (x,)), (broadcasting, (x, b)), (epilogues, (x, b)), (with_matmul, (x, w, b))]
    for fn, args in cases:
        graph, _, results = capture(fn, args, {})
        graphs.append((graph, results))
    wp = G.randn(8, 8, requires_grad=True)
    joint = capture_joint(lambda x: gelu_residual(x @ wp).sum(), (x,), {})
    graphs += [(joint.forward, joint.results), (joint.backward, joint.results)]
    out = []
    for graph, results in graphs:
        program, steps = _groups(graph, results)
        later = Program._used_after(types.SimpleNamespace(graph=program.graph, steps=steps))
        out.append(([s for s in steps if isinstance(s, FusedGroup)], later))
    return out


def every_op_group(dtype: Any) -> tuple[FusedGroup, set[int]]:
    """One group chaining every op whose per-op CUDA kernel maps `dtype` to `dtype` (and has no condition
    operand): each reads the previous value and the input, its scalars 0.5; every value is stored."""
    import generated._cuda_kernels as kernels

    by_name = {k.name: k for k in vars(kernels).values() if isinstance(k, PointwiseKernel)}
    graph = Graph()
    x = graph.new_value((4,), (1,), dtype, "cpu")
    graph.inputs.append(x)
    prev, nodes = x, []
    for name, (tensors, scalars, _, _) in sorted(fusion_specs().items()):
        kernel = by_name.get(re.sub(r"\W", "_", name))
        if kernel is None or kernel.conditions or kernel.instances.get(dtype.name, ("",))[0] != dtype.name:
            continue
        op = dispatcher.find(name)
        names = [p.strip().split("=")[0].split()[-1] for p in
                 str(op.schema).split("(", 1)[1].rsplit(") ->", 1)[0].split(",") if p.strip() not in ("", "*")]
        args = tuple(prev if a == tensors[0] else x if a in tensors else 0.5 if a in scalars else None for a in names)
        node = Node(op, args, ())
        node.outputs = (graph.new_value((4,), (1,), dtype, "cpu", producer=node),)
        nodes.append(node)
        prev = node.outputs[0]
    graph.nodes = nodes
    group = FusedGroup(nodes, (4,), dtype)
    assert len(nodes) > 40, "the per-op kernel table should hold most pointwise ops"
    return group, {v.id for n in nodes for v in n.outputs}


@pytest.fixture(scope="module")
def samples() -> list[tuple[list[FusedGroup], dict[int, set[int]]]]:
    with G.no_grad():
        return captured_groups()


def test_the_sample_graphs_form_fused_groups_with_reductions(samples: Any) -> None:
    fused = [g for groups, _ in samples for g in groups]
    assert len(fused) >= 7
    assert {g.reduction.name for g in fused if g.reduction is not None} >= {"sum.dim_IntList", "mean", "mean.dim"}


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_nvrtc_compiles_every_fused_source(samples: Any, dtype: str) -> None:
    groups: list[FusedGroup] = []
    later: dict[int, set[int]] = {}
    for sample, stored in samples:
        for g in sample:
            copy = dataclasses.replace(g, dtype=DTYPES[dtype])
            groups.append(copy)
            later[id(copy)] = stored[id(g)]
    if dtype in ("float32", "float64"):  # the half types compute in float: the same instances of the specs
        every, stored_every = every_op_group(DTYPES[dtype])
        groups.append(every)
        later[id(every)] = stored_every
    source = cuda_fusion.render(groups, later, fusion_specs())
    assert all(f"namespace {g.entry} " in source for g in groups)
    declared = set(ENTRY.findall(source))
    # per group: contig and strided, 32 and 64-bit; a reduction: rows and partial of each, and one finish
    assert len(declared) == sum(9 if g.reduction is not None else 4 for g in groups)
    # Note [Compile check cache] (tests/cuda/test_nvrtc_compiles_every_kernel.py): a source recorded clean by
    # an earlier run is not compiled again
    job = (f"fused_{dtype}.cu", source, FAST)
    record = _record_path(job, "nvrtc-{}.{}".format(*nvrtc_check.nvrtc_version()), headers_digest())
    entries = _read_record(record)
    if entries is None:
        try:
            result = nvrtc_check.nvrtc_compile(source, job[0], nvrtc_check.default_options(FAST),
                                               nvrtc_check.CI_ARCH, kind="cubin")
        except nvrtc_check.NvrtcCompileError as e:
            pytest.fail(f"NVRTC rejected the fused {dtype} kernels:\n{e.log[:4000]}")
        assert nvrtc_check.warnings_in(result.log) == []
        entries = sorted({e.decode() for e in CUBIN_ENTRY.findall(result.binary)})
        if declared <= set(entries):
            _write_record(record, entries)
    assert declared <= set(entries)

def test_a_source_depends_on_the_ops_not_on_shapes_or_layouts() -> None:
    def source(*args: G.Tensor) -> str:
        graph, _, results = capture(broadcasting, args, {})
        program, steps = _groups(graph, results)
        fused = [s for s in steps if isinstance(s, FusedGroup)]
        return cuda_fusion.render(fused, Program._used_after(types.SimpleNamespace(graph=program.graph, steps=steps)),
                                  fusion_specs())

    with G.no_grad():
        a = source(G.randn(6, 8), G.randn(8))
        assert source(G.randn(8, 30).t(), G.randn(8)) == a  # another shape, transposed
        assert source(G.randn(6, 8, dtype=G.float64), G.randn(8, dtype=G.float64)) != a  # another dtype


def test_a_registered_source_is_loaded_by_its_key() -> None:
    from runtime.cuda.compile import read_source, register_source

    text = '// a run-time source\nextern "C" __global__ void k() {}\n'
    key = register_source("fused", text)
    assert read_source(key) == text and register_source("fused", text) == key  # one text, one module
    assert register_source("fused", text + "\n") != key
