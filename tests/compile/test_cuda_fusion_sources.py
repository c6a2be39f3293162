"""G.compile's fused CUDA kernels without a GPU: NVRTC compiles every source runtime/compile/cuda_render.py
renders, for float32, float64, float16 and bfloat16, to a cubin for sm_90 with no error and no warning, and
every kernel the source declares is in the cubin (Note [Fused kernels on a CUDA device]).

The groups come from graphs captured on the CPU and moved to a CUDA device (every value's device, and its
dtype where it is float32, rewritten): fusion.groups with that device forms the groups a CUDA graph forms, so
the sources are those the same graphs make on a device: pointwise chains, and reductions with prologues and
epilogues (softmax, log-softmax, layer norm, cross entropy, variance, sums, means, amax), forward and
backward. One more group chains every op whose per-op CUDA kernel maps the dtype to itself, so that every
spec's C++ is compiled inside a fused kernel, for float32 and float64 (float16 and bfloat16 compute in float:
their kernels differ from float32's only in the loads, stores and casts, which the sample graphs compile).
Never skipped: NVRTC is part of the `dev` install, as in tests/cuda/test_nvrtc_compiles_every_kernel.py, whose
records of clean compiles this test shares.
"""

from __future__ import annotations

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
CUDA = "cuda:0"


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


def reductions(x: G.Tensor, b: G.Tensor, t: G.Tensor) -> Any:
    F = G.nn.functional
    return (F.softmax(x * 2 + b, -1), F.log_softmax(x, 0), F.layer_norm(x, (8,), b, b * 2),
            F.cross_entropy(x - b, t), G.var(G.exp(x), 1), G.amax(G.tanh(x), 1), (x * b).sum(0))


def _to_device(graph: Graph, dtype: Any) -> None:
    """Every value of the graph on the CUDA device, float32 ones of `dtype` (the graph the same function
    captures there)."""
    device = G.device(CUDA)
    values = {id(v): v for v in [*graph.inputs, *graph.externals(), *(v for n in graph.nodes for v in n.outputs)]}
    for n in graph.nodes:
        values.update({id(v): v for v in n.inputs()})
    for v in values.values():
        v.device = device
        if v.dtype is G.float32:
            v.dtype = dtype


def _groups(graph: Graph, results: dict[int, Any], dtype: Any) -> tuple[Program, list[Node | FusedGroup]]:
    program = Program(graph, results, False)  # the passes, not the CPU kernels
    _to_device(program.graph, dtype)
    steps = cuda_fusion.cuda_groups(program.graph.nodes, fusion_specs(), CUDA)
    return program, steps


def _stored(program: Program, steps: list[Node | FusedGroup]) -> dict[int, set[int]]:
    return Program._used_after(types.SimpleNamespace(graph=program.graph, steps=steps))  # type: ignore[arg-type]


def captured_groups(dtype: Any) -> list[tuple[list[FusedGroup], dict[int, set[int]]]]:
    """(groups, the values each stores) of the sample graphs on the device in `dtype`, forward and (for
    the training ones) backward."""
    x, b, w = G.randn(6, 8), G.randn(8), G.randn(8, 8)
    t = G.randint(0, 8, (6,))
    graphs: list[tuple[Graph, dict[int, Any]]] = []
    cases: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
        (gelu_residual, (x,)), (broadcasting, (x, b)), (epilogues, (x, b)), (with_matmul, (x, w, b)),
        (reductions, (x, b, t))]
    for fn, args in cases:
        graph, _, results = capture(fn, args, {})
        graphs.append((graph, results))
    wp = G.randn(8, 8, requires_grad=True)
    bp = G.randn(8, requires_grad=True)
    def sliced(x: G.Tensor) -> G.Tensor:
        h = x @ wp
        return gelu_residual(h).sum() + (G.tanh(h[:, 1:7:2]) * h[:, :3]).sum()

    losses = [sliced,
              lambda x: sum(r.float().sum() * 0.5 for r in reductions(x @ wp, bp, t))]
    for loss in losses:
        with G.enable_grad():  # (the fixture captures the forward graphs without autograd)
            joint = capture_joint(loss, (x,), {})
        graphs += [(joint.forward, joint.results), (joint.backward, joint.results)]
    out = []
    for graph, results in graphs:
        program, steps = _groups(graph, results, dtype)
        out.append(([s for s in steps if isinstance(s, FusedGroup)], _stored(program, steps)))
    return out


def every_op_group(dtype: Any) -> tuple[list[FusedGroup], dict[int, set[int]]]:
    """The group chaining every op whose per-op CUDA kernel maps `dtype` to `dtype` (and has no condition
    operand): each reads the previous value and the input, its scalars 0.5; every value is stored."""
    import generated._cuda_kernels as kernels

    by_name = {k.name: k for k in vars(kernels).values() if isinstance(k, PointwiseKernel)}
    graph = Graph()
    x = graph.new_value((4,), (1,), dtype, G.device(CUDA))
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
        node.outputs = (graph.new_value((4,), (1,), dtype, G.device(CUDA), producer=node),)
        nodes.append(node)
        prev = node.outputs[0]
    assert len(nodes) > 40, "the per-op kernel table should hold most pointwise ops"
    fused = [s for s in cuda_fusion.cuda_groups(nodes, fusion_specs(), CUDA) if isinstance(s, FusedGroup)]
    assert sum(len(g.nodes) for g in fused) == len(nodes)
    return fused, {id(g): {v.id for n in nodes for v in n.outputs} for g in fused}


@pytest.fixture(scope="module")
def samples() -> dict[str, list[tuple[list[FusedGroup], dict[int, set[int]]]]]:
    with G.no_grad():
        return {name: captured_groups(dtype) for name, dtype in DTYPES.items()}


def test_the_sample_graphs_form_fused_groups_with_reductions(samples: Any) -> None:
    fused = [g for groups, _ in samples["float32"] for g in groups]
    assert len(fused) >= 10
    in_groups = {n.name for g in fused for n in g.nodes}
    assert {"softmax.int", "log_softmax.int", "_cross_entropy_indices", "var.correction", "amax", "sum.dim_IntList",
            "mean", "mean.dim"} <= in_groups
    assert "native_layer_norm" in in_groups or "layer_norm" in in_groups
    assert sum(1 for g in fused if g.row_dims is not None) >= 6
    backward = [g for groups, _ in samples["float32"][-3::2] for g in groups]  # the two backward graphs
    assert {"slice_backward", "_softmax_backward_data", "_log_softmax_backward_data"} & \
        {n.name for g in backward for n in g.nodes} and any(g.row_dims is not None for g in backward)
    half = [g for groups, _ in samples["float16"] for g in groups]
    assert [[n.name for n in g.nodes] for g in half] == [[n.name for n in g.nodes] for g in fused]


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_nvrtc_compiles_every_fused_source(samples: Any, dtype: str) -> None:
    groups: list[FusedGroup] = []
    later: dict[int, set[int]] = {}
    for sample, stored in samples[dtype]:
        groups += sample
        later.update(stored)
    if dtype in ("float32", "float64"):  # the half types compute in float: the same instances of the specs
        every, stored_every = every_op_group(DTYPES[dtype])
        groups += every
        later.update(stored_every)
    source, plans = cuda_fusion.render(groups, later)
    assert all(plans[id(g)] is not None and f"namespace {g.entry} " in source for g in groups)
    declared = set(ENTRY.findall(source))
    # per group: a rows kernel (32 and 64-bit index) and a finish kernel where it has totals or scatters,
    # else contig (not with a window) and strided, 32 and 64-bit
    assert len(declared) == sum((2 + plans[id(g)].finish) if plans[id(g)].rows else 2 if plans[id(g)].windows
                                else 4 for g in groups)
    assert any(plans[id(g)].finish for g in groups) and any(plans[id(g)].gather for g in groups)
    assert any(plans[id(g)].windows for g in groups)
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
        program, steps = _groups(graph, results, args[0].dtype)
        return cuda_fusion.render([s for s in steps if isinstance(s, FusedGroup)], _stored(program, steps))[0]

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
