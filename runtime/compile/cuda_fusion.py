"""Fused groups on CUDA: the groups fusion.py forms on a CUDA graph, rendered as CUDA C++ kernels from the same
kernel specs, compiled through the runtime's NVRTC cache (runtime/cuda/compile.py) and launched as the
generated kernels are.

Note [Fused CUDA kernels]
A graph whose tensors are on a CUDA device forms runs of pointwise nodes with a sum or mean epilogue
(cuda_groups.py, not fusion.py's graph fusion, which the CPU kernels render), in the dtypes below: float32
and float64, and float16 and bfloat16, which the per-op CUDA kernels compute in float.
One source per program holds every group's kernels. Each op of a group gets the device function the generator
renders for its per-op kernel (templates/cuda/pointwise.cu.j2: `template <typename C> auto <op>_fn(const C
a_<arg>...)` returning the spec's C++ text), and a member is computed as the per-op kernel computes it:
operands cast to the compute type (`opgen::OpMath`: float for the half types), the result cast to the storage
type, so every intermediate is rounded as eager execution rounds it; scalars are literals of the compute type
(the value the per-op launcher passes). The shapes and strides are not in the source: a group's kernels take
them at launch, so one source serves every layout and size of its inputs.
Per index width (32 or 64 bits, `launch.index_bits`) a group has a `contig` kernel (every input dense and of
the group's shape: element i is at i) and a `strided` one taking the packed `opgen::Strided` of the output
and the inputs (broadcast dims stride 0; dims merged by `launch.coalesce`; the fast-division offsets of
opgen_types.cuh), chosen by `pointwise.plan` as for a per-op launch. Only values read after the group are
stored (new contiguous tensors).
A sum or mean epilogue (cuda_groups.py: all elements, or the last dim; one of the group's `nodes`) reduces
with opgen_reduce.cuh's reducers, as the generated reduction kernels do (accumulating in the compute type):
one block per row computes the row's elements and combines them (`block_combine`); a single row of
TWO_PASS_MIN elements or more runs in two passes (Note [Two-pass reductions]): blocks compute and reduce
chunks into partial accumulators, and one block finishes them.
A group whose inputs at run time are not what it was compiled for (another dtype or device, a negative
stride, more dims than a Strided holds after merging) runs its nodes' kernels instead.
On the emulated device (OPGEN_EMULATE_CUDA=1) the same source is compiled by the host engine.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime.compile.cuda_groups import arg_names, run_groups
from runtime.compile.fusion import FusedGroup
from runtime.compile.graph import Graph, Node, Value

# dtype name -> the C type that stores it in a kernel (the compute type is opgen::OpMath of it)
STORAGE = {"float32": "float", "float64": "double", "float16": "opgen::half", "bfloat16": "opgen::bfloat16"}
INDEX_TYPES = {32: "unsigned int", 64: "unsigned long long"}
PATHS = ("contig", "strided")

_ARG = re.compile(r"\ba_(\w+)\b")


def graph_device(graph: Graph) -> str | None:
    """`cuda:N` when the graph computes on a CUDA device (its first CUDA value's), else None."""
    values = [*graph.inputs, *graph.externals(), *(v for n in graph.nodes for v in n.outputs)]
    for v in values:
        if getattr(v.device, "type", None) == "cuda":
            return str(v.device)
    return None


def cuda_groups(nodes: list[Node], specs: dict[str, Any], device: str) -> list[Node | FusedGroup]:
    """The groups of a CUDA graph (cuda_groups.py): runs of the nodes on `device` whose dtype the fused kernels
    store, with a sum or mean epilogue."""
    return run_groups(nodes, specs, device, STORAGE)


def _members(group: FusedGroup) -> list[Node]:
    """The pointwise members of a group (its nodes but the sum or mean epilogue)."""
    return [n for n in group.nodes if n is not group.reduction]


def _function_name(op: str) -> str:
    return "fused_" + re.sub(r"\W", "_", op) + "_fn"


def _literal(x: Any) -> str:
    """A scalar argument as a literal of the compute type (what the per-op launcher passes, `comp_t(s)`)."""
    if isinstance(x, bool):
        return f"static_cast<comp_t>({'true' if x else 'false'})"
    if isinstance(x, int):
        return f"static_cast<comp_t>({x}LL)"
    x = float(x)
    if math.isnan(x):
        return "static_cast<comp_t>(__longlong_as_double(0x7ff8000000000000ll))"
    if math.isinf(x):
        return f"static_cast<comp_t>({'-' if x < 0 else ''}__longlong_as_double(0x7ff0000000000000ll))"
    return f"static_cast<comp_t>({x.hex()})"


def _op_function(name: str, spec: Any) -> str:
    tensors, scalars, expr, _ = spec
    params = ", ".join(f"const C a_{p}" for p in (*tensors, *scalars))
    return (f"template <typename C>\n__device__ __forceinline__ auto {_function_name(name)}({params}) {{\n"
            f"  return {expr};\n}}\n")


def _group_io(group: FusedGroup, used_later: set[int]) -> tuple[list[Value], list[Value]]:
    produced = {v.id for n in _members(group) for v in n.outputs}
    inputs: list[Value] = []
    for n in _members(group):
        for v in n.inputs():
            if v.id not in produced and all(v.id != w.id for w in inputs):
                inputs.append(v)
    outputs = [v for n in _members(group) for v in n.outputs if v.id in used_later]
    return inputs, outputs


def _body(group: FusedGroup, inputs: list[Value], specs: dict[str, Any], load: Callable[[int], str]) -> list[str]:
    """The statements computing every member at one element: `x<k>` the inputs, `v<id>` the values."""
    lines = [f"const store_t x{k} = {load(k)};" for k in range(len(inputs))]
    local = {v.id: f"x{k}" for k, v in enumerate(inputs)}
    for n in _members(group):
        tensors, scalars, _, _ = specs[n.name]
        values = dict(zip(arg_names(n) or [], n.args, strict=False))
        args = []
        for name in (*tensors, *scalars):
            arg = values.get(name)
            if isinstance(arg, Value):
                args.append(f"opgen::cast<comp_t>({local[arg.id]})")
            elif arg is None:
                raise ValueError(f"G.compile: argument {name} of {n.name} has no value in a fused CUDA kernel")
            else:
                args.append(_literal(arg))
        out = n.outputs[0]
        local[out.id] = f"v{out.id}"
        lines.append(f"const store_t v{out.id} = opgen::cast<store_t>({_function_name(n.name)}<comp_t>("
                     f"{', '.join(args)}));")
    return lines


def render_group(group: FusedGroup, entry: str, specs: dict[str, Any], used_later: set[int]) -> str:
    """The CUDA C++ of one group's kernels (Note [Fused CUDA kernels]); fills in its inputs, outputs and entry."""
    inputs, outputs = _group_io(group, used_later)
    group.inputs, group.outputs, group.entry = inputs, outputs, entry
    nop = 1 + len(inputs)
    red = group.reduction
    lines = [f"// {', '.join(n.name for n in _members(group))}" + (f", then {red.name}" if red is not None else ""),
             f"namespace {entry} {{", f"typedef {STORAGE[group.dtype.name]} store_t;",
             "typedef opgen::OpMath<store_t>::type comp_t;"]
    if red is not None:
        lines.append(f"typedef opgen::{'MeanOp' if red.name.startswith('mean') else 'SumOp'}<comp_t> R;")
    reduced_value = None if red is None else f"v{red.args[0].id}"
    for bits, index_t in INDEX_TYPES.items():
        for path in PATHS:
            strided = path == "strided"
            stride_param = f"const opgen::Strided<{index_t}, {nop}> st, " if strided else ""
            arrays = ", ".join([*(f"store_t* __restrict__ out{k}" for k in range(len(outputs))),
                                *(f"const store_t* __restrict__ in{k}" for k in range(len(inputs)))])
            arrays = arrays + ", " if arrays else ""

            def load(k: int, strided: bool = strided) -> str:
                return f"in{k}[off[{k + 1}]]" if strided else f"in{k}[i]"

            where = "off[0]" if strided else "i"
            element = ([f"{index_t} off[{nop}];", "st.offsets(i, off);"] if strided else []) + \
                _body(group, inputs, specs, load) + [f"out{k}[{where}] = v{v.id};" for k, v in enumerate(outputs)]
            if red is None:
                lines += [f'extern "C" __global__ void {entry}__{path}{bits}(const {index_t} n, '
                          f"{stride_param}{arrays.rstrip(', ')}) {{",
                          f"  OPGEN_GRID_STRIDE({index_t}, i, n) {{", *("    " + e for e in element), "  }", "}"]
                continue
            step = f"acc = R::step(acc, opgen::cast<comp_t>({reduced_value}), static_cast<long long>(j));"
            lines += [f'extern "C" __global__ void {entry}__rows_{path}{bits}(const {index_t} rows, '
                      f"const {index_t} inner, {stride_param}{arrays}store_t* __restrict__ reduced) {{",
                      f"  for ({index_t} r = blockIdx.x; r < rows; r += gridDim.x) {{",
                      "    R::acc_t acc = R::init();",
                      f"    for ({index_t} j = threadIdx.x; j < inner; j += blockDim.x) {{",
                      f"      const {index_t} i = r * inner + j;",
                      *("      " + e for e in element), "      " + step, "    }",
                      "    acc = opgen::block_combine<R>(acc);",
                      "    if (threadIdx.x == 0) reduced[r] = R::finish<store_t>(acc, static_cast<long long>(inner), "
                      "0.0);", "  }", "}"]
            lines += [f'extern "C" __global__ void {entry}__partial_{path}{bits}(const {index_t} n, '
                      f"{stride_param}{arrays}R::acc_t* __restrict__ partial) {{",
                      "  R::acc_t acc = R::init();",
                      f"  OPGEN_GRID_STRIDE({index_t}, i, n) {{",
                      f"    const {index_t} j = i;",
                      *("    " + e for e in element), "    " + step, "  }",
                      "  acc = opgen::block_combine<R>(acc);",
                      "  if (threadIdx.x == 0) partial[blockIdx.x] = acc;", "}"]
    if red is not None:
        lines += [f'extern "C" __global__ void {entry}__finish(const R::acc_t* __restrict__ partial, '
                  "store_t* __restrict__ reduced, const int parts, const long long n) {",
                  "  opgen::reduce_finish<R, store_t>(partial, reduced, nullptr, parts, n, 0.0);", "}"]
    lines.append(f"}}  // namespace {entry}")
    group.source = "\n".join(lines) + "\n"
    return group.source


def render(fused: list[FusedGroup], later: dict[int, set[int]], specs: dict[str, Any]) -> str:
    """One CUDA source with the kernels of every group (entries `opgen_fused_<k>`) and the device function
    of each op they use, once."""
    ops = sorted({n.name for g in fused for n in _members(g)})
    parts = ["// G.compile: fused kernels (runtime/compile/cuda_fusion.py, Note [Fused CUDA kernels])",
             '#include "opgen_reduce.cuh"', "", *(_op_function(op, specs[op]) for op in ops)]
    parts += [render_group(g, f"opgen_fused_{k}", specs, later[id(g)]) for k, g in enumerate(fused)]
    return "\n".join(parts)


class CudaKernels:
    """The fused groups of one CUDA program: their source, registered with the kernel cache, and launches."""

    def __init__(self, fused: list[FusedGroup], later: dict[int, set[int]], specs: dict[str, Any],
                 device: str) -> None:
        from runtime.cuda.compile import register_source

        self.device = device
        self.index = int(device.partition(":")[2] or 0)
        self.source = render(fused, later, specs)
        self.path = register_source("fused", self.source)

    def run(self, group: FusedGroup, ins: list[Any], env: dict[int, Any]) -> bool:
        """Launch the group's kernels on `ins`, storing its outputs in `env`; False (nothing done) when the
        inputs are not what the kernels take (Note [Fused CUDA kernels])."""
        from runtime.cuda import fixed as F
        from runtime.cuda import launch as L
        from runtime.cuda.pointwise import plan
        from runtime.tensor import Tensor

        if not all(tuple(t.shape) == v.shape and t.dtype is group.dtype and str(t.device) == self.device
                   for t, v in zip(ins, group.inputs, strict=True)):
            return False
        arrays = [t._data for t in ins]
        if any(s < 0 for a in arrays for s in a.strides):
            return False
        shape = group.shape
        numel = math.prod(shape)
        contiguous = [0] * len(shape)
        acc = 1
        for d in reversed(range(len(shape))):
            contiguous[d] = acc
            acc *= shape[d]
        strides = [tuple(contiguous)] + [L.broadcast_strides(shape, a.shape, F.element_strides(a)) for a in arrays]
        outs = [F.empty(shape, group.dtype, self.index) for _ in group.outputs]
        red = group.reduction
        reduced = F.empty(red.outputs[0].shape, group.dtype, self.index) if red is not None else None
        if numel:
            pointers = [0] + [a.data.ptr for a in arrays]  # the output's alignment does not matter: vec is 1
            path, bits, mshape, mstrides = plan(shape, strides, pointers, [1] * len(strides), 1,
                                                all(tuple(a.shape) == shape for a in arrays))
            if path == "strided" and len(mshape) > L.MAX_DIMS:
                return False
            self._launch(group, path, bits, mshape, mstrides, numel, outs, arrays, reduced)
        for v, a in zip(group.outputs, outs, strict=True):
            env[v.id] = Tensor._wrap(a, group.dtype)
        if red is not None:
            env[red.outputs[0].id] = Tensor._wrap(reduced, group.dtype)
        return True

    def _launch(self, group: FusedGroup, path: str, bits: int, mshape: tuple[int, ...], mstrides: list[Any],
                numel: int, outs: list[Any], arrays: list[Any], reduced: Any) -> None:
        from runtime.cuda import fixed as F
        from runtime.cuda import launch as L
        from runtime.cuda.compile import load_function
        from runtime.cuda.device import require_cupy, sm_count
        from runtime.cuda.reduce import ACC_BYTES, PARTIAL_BLOCKS_PER_SM, use_two_pass

        cupy = require_cupy()
        index = F.index_np(bits)
        packed = (L.pack_strided(mshape, mstrides, bits),) if path == "strided" else ()
        operands = (*outs, *arrays)
        sms = sm_count(self.index)
        with cupy.cuda.Device(self.index):
            stream = cupy.cuda.get_current_stream()  # the device's current stream, as the per-op launches
            if group.reduction is None:
                fn = load_function(self.path, f"{group.entry}__{path}{bits}", self.index)
                cfg = L.launch_config(numel, sms)
                fn((cfg.grid,), (cfg.block,), (index(numel), *packed, *operands), stream=stream)
                return
            inner = group.inner
            rows = numel // inner
            if use_two_pass(rows, inner):
                parts = sms * PARTIAL_BLOCKS_PER_SM
                partial = cupy.empty(parts * ACC_BYTES, dtype=np.uint8)
                load_function(self.path, f"{group.entry}__partial_{path}{bits}", self.index)(
                    (parts,), (L.THREADS,), (index(numel), *packed, *operands, partial), stream=stream)
                load_function(self.path, f"{group.entry}__finish", self.index)(
                    (1,), (L.THREADS,), (partial, reduced, np.int32(parts), np.int64(numel)), stream=stream)
                return
            fn = load_function(self.path, f"{group.entry}__rows_{path}{bits}", self.index)
            grid = max(1, min(rows, sms * L.BLOCKS_PER_SM * 4))
            fn((grid,), (F.block_threads(inner),), (index(rows), index(inner), *packed, *operands, reduced),
               stream=stream)
