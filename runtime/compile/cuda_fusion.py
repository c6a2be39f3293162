"""Fused groups on CUDA: the groups fusion.py forms on a CUDA graph, rendered as CUDA C++ kernels by
cuda_render.py from the same kernel terms as the CPU kernels, compiled through the runtime's NVRTC cache
(runtime/cuda/compile.py) and launched as the generated kernels are.

Note [Fused CUDA kernels]
A graph whose tensors are on a CUDA device is grouped by fusion.groups with that device (Note [Fused kernels
on a CUDA device]: the nodes computing on it, in float32, float64, float16 and bfloat16 and the integer and
bool dtypes they read), so pointwise runs and reductions with pointwise prologues and epilogues (softmax,
log-softmax, layer norm, variance, cross entropy, sums, means, amax and amin of expressions, and their
backward patterns) are each one kernel, as on the CPU. One source per program holds every group's kernels.
At launch the shapes and strides go in `opgen::Strided` arguments: for a group without a reduction, the
domain's dims merged by `launch.coalesce`, a `contig` kernel where every input is dense and of the
domain's shape; for one with, the kept dims and the row dims packed separately (cuda_render.py). Index width
32 or 64 as a per-op launch chooses (`launch.index_bits`, forced by `force_index_bits`). Only values read
after the group are stored (new contiguous tensors). A group whose inputs at run time are not what it was
compiled for (another dtype, shape or device, a negative stride, more dims than a Strided holds after
merging), one cuda_render.py does not render (Unsupported), or one whose gathered index is out of range,
runs its nodes' operators instead. On the emulated device (OPGEN_EMULATE_CUDA=1) the same source is
compiled by the host engine.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from runtime.compile.cuda_render import CudaPlan, Unsupported, header, render_group
from runtime.compile.fusion import FusedGroup, groups
from runtime.compile.graph import Graph, Node


def graph_device(graph: Graph) -> str | None:
    """`cuda:N` when the graph computes on a CUDA device (its first CUDA value's), else None."""
    values = [*graph.inputs, *graph.externals(), *(v for n in graph.nodes for v in n.outputs)]
    for v in values:
        if getattr(v.device, "type", None) == "cuda":
            return str(v.device)
    return None


def cuda_groups(nodes: list[Node], specs: dict[str, Any], device: str) -> list[Node | FusedGroup]:
    """The steps of a CUDA graph: fusion.py's groups of the nodes computing on `device`, and the others."""
    return groups(nodes, specs, device)


def render(fused: list[FusedGroup], later: dict[int, set[int]]) -> tuple[str, dict[int, CudaPlan | None]]:
    """One CUDA source with the kernels of every group (entries `opgen_fused_<k>__...`), and each group's
    launch plan (None for a group cuda_render.py does not render)."""
    parts = [header()]
    plans: dict[int, CudaPlan | None] = {}
    for k, g in enumerate(fused):
        try:
            plans[id(g)] = render_group(g, f"opgen_fused_{k}", later[id(g)])
            parts.append(g.source)
        except Unsupported:
            plans[id(g)] = None
            g.source = ""
    return "\n".join(parts), plans


def _split(shape: tuple[int, ...], strides: list[tuple[int, ...]], dims: list[int]) -> tuple[Any, list[Any]]:
    from runtime.cuda import launch as L

    return L.coalesce(tuple(shape[d] for d in dims), [tuple(st[d] for d in dims) for st in strides])


class CudaKernels:
    """The fused groups of one CUDA program: their source, registered with the kernel cache, and launches."""

    def __init__(self, fused: list[FusedGroup], later: dict[int, set[int]], device: str) -> None:
        from runtime.cuda.compile import register_source

        self.device = device
        self.index = int(device.partition(":")[2] or 0)
        self.source, self.plans = render(fused, later)
        self.path = register_source("fused", self.source)

    def run(self, group: FusedGroup, ins: list[Any], env: dict[int, Any]) -> bool:
        """Launch the group's kernels on `ins`, storing its outputs in `env`; False (nothing stored) when the
        inputs are not what the kernels take or the group has none (Note [Fused CUDA kernels])."""
        from runtime.cuda import fixed as F
        from runtime.cuda import launch as L
        from runtime.tensor import Tensor

        plan = self.plans.get(id(group))
        if plan is None or not all(tuple(t.shape) == v.shape and t.dtype is v.dtype and str(t.device) == self.device
                                   for t, v in zip(ins, group.inputs, strict=True)):
            return False
        arrays = [t._data for t in ins]
        if any(s < 0 for a in arrays for s in a.strides):
            return False
        shape = group.shape
        strides = [op.strides(shape, F.element_strides(arrays[op.index]) if op.kind in ("in", "window") else None)
                   for op in plan.operands]
        outs = [F.empty(v.shape, v.dtype, self.index) for v in group.outputs]
        windows = [np.int64(F.element_strides(arrays[k])[dim]) for k, dim in plan.windows]
        if plan.rows:
            dims = group.row_dims or ()
            outer = _split(shape, strides, [d for d in range(len(shape)) if d not in dims])
            inner = _split(shape, strides, list(dims))
            if len(outer[0]) > L.MAX_DIMS or len(inner[0]) > L.MAX_DIMS:
                return False
            if not self._rows(group, plan, shape, strides, outer, inner, outs, arrays, windows):
                return False
        else:
            numel = math.prod(shape)
            mshape, mstrides = L.coalesce(shape, strides)
            dense = all(L.is_contiguous(shape, st) for st in strides)
            path = "contig" if dense and not plan.windows else "strided"
            if path == "strided" and len(mshape) > L.MAX_DIMS:
                return False
            bits = L.index_bits(numel, mshape, mstrides)
            packed = (L.pack_strided(mshape, mstrides, bits),) if path == "strided" else ()
            self._launch(group, path, bits, (F.index_np(bits)(numel), *packed, *outs, *arrays, *windows), numel)
        for v, a in zip(group.outputs, outs, strict=True):
            env[v.id] = Tensor._wrap(a, v.dtype)
        return True

    def _rows(self, group: FusedGroup, plan: CudaPlan, shape: tuple[int, ...], strides: list[tuple[int, ...]],
              outer: Any, inner: Any, outs: list[Any], arrays: list[Any], windows: list[Any]) -> bool:
        """The rows kernel, then the finish kernel; False when a gathered index was out of range."""
        from runtime.cuda import launch as L
        from runtime.cuda.device import require_cupy, sm_count

        cupy = require_cupy()
        dims = group.row_dims or ()
        n_inner = math.prod(shape[d] for d in dims)
        rows = math.prod(shape) // n_inner if n_inner else 0
        bits = L.index_bits(math.prod(shape), shape, strides)
        index = np.uint32 if bits == 32 else np.uint64
        with cupy.cuda.Device(self.index):
            scratch = [cupy.zeros(math.prod(t.out.shape), dtype=_acc_np(t.out.dtype)) for t in plan.scatters]
            totals = [cupy.zeros(1, dtype=_acc_np(t.out.dtype)) for t in plan.totals]
            err = [cupy.zeros(1, dtype=np.int32)] if plan.gather else []
            pointers = (*outs, *arrays, *scratch, *totals, *err, *windows)
            if rows:
                packed = (L.pack_strided(outer[0], outer[1], bits), L.pack_strided(inner[0], inner[1], bits))
                splits = split_rows(rows, n_inner, sm_count(self.index)) if plan.split else 1
                self._launch(group, "rows", bits, (index(rows), index(n_inner), index(splits), *packed, *pointers),
                             rows * splits)
            if plan.finish:
                sizes = [np.uint64(math.prod(t.out.shape)) for t in plan.scatters]
                work = max([1, *(int(s) for s in sizes)])
                self._launch(group, "finish", 0, (np.uint64(work), *sizes, *pointers), work)
            if err and int(err[0].get()[0]):
                return False
        return True

    def _launch(self, group: FusedGroup, path: str, bits: int, args: tuple[Any, ...], work: int) -> None:
        """One kernel of the group: `path` is contig, strided, rows (one block per row) or finish."""
        from runtime.cuda import fixed as F
        from runtime.cuda import launch as L
        from runtime.cuda.compile import load_function
        from runtime.cuda.device import require_cupy, sm_count

        cupy = require_cupy()
        name = f"{group.entry}__{path}{bits if bits else ''}"
        sms = sm_count(self.index)
        with cupy.cuda.Device(self.index):
            stream = cupy.cuda.get_current_stream()  # the device's current stream, as the per-op launches
            fn = load_function(self.path, name, self.index)
            if path == "rows":
                inner = int(args[1])
                grid = max(1, min(work, sms * L.BLOCKS_PER_SM * 4))
                fn((grid,), (F.block_threads(inner),), args, stream=stream)
                return
            cfg = L.launch_config(work, sms)
            fn((cfg.grid,), (cfg.block,), args, stream=stream)


def split_rows(rows: int, inner: int, sms: int) -> int:
    """Blocks per row for a split rows kernel (Note [Split rows]): enough for a few blocks per multiprocessor
    over all rows, each block keeping at least 8 elements per thread of the row."""
    from runtime.cuda import fixed as F
    from runtime.cuda import launch as L

    wanted = -(-sms * L.BLOCKS_PER_SM // rows)
    most = max(1, inner // (8 * F.block_threads(inner)))
    return max(1, min(wanted, most))


def _acc_np(dtype: Any) -> Any:
    """The NumPy dtype of a sum's accumulator (the compute type: float for the half types)."""
    return np.float64 if dtype.name == "float64" else np.float32
