"""Launching generated pointwise kernels (codegen/gen_cuda.py, Note [Kernel instances]).

`launch(kernel, tensors, scalars, out=None)` does what PyTorch's TensorIterator does for a CUDA
pointwise op: find the common dtype (`runtime.dtypes.result_type`), cast inputs that differ, broadcast,
allocate or check the output, merge dims (`launch.coalesce`), pick the path (vec / contig / strided)
and the index width, and launch the instance on the current stream. Importable without CuPy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from runtime.cuda import fixed as F
from runtime.cuda import launch as L
from runtime.cuda.launch import broadcast_strides
from runtime.vocabulary import PromoteKind, compute_dtype, is_floating


@dataclass(frozen=True)
class PointwiseKernel:
    """One generated op: its source file and, per input dtype, (output dtype, vector width)."""

    name: str
    source: str
    promote: str
    num_tensors: int
    num_scalars: int
    instances: dict[str, tuple[str, int]]
    promote_scalars: tuple[int, ...] = ()  # scalars that take part in type promotion (wrapped numbers)
    conditions: tuple[int, ...] = ()  # positions of the tensors used as a condition: bool, whatever the instance
    alpha: int | None = None  # position in the scalars of an `alpha` (checked as PyTorch: runtime/kernels/checks.py)
    follow: tuple[int, ...] = ()  # positions of zero_dim tensors: they take the common dtype, not part of promotion


def select_instance(kernel: PointwiseKernel, common: str, default_float: str) -> str:
    """The instance (input dtype) for inputs whose common dtype is `common`.

    `promote: float` instances for integer inputs produce float32; with another default float dtype the
    inputs are cast to it first. Raises NotImplementedError, as PyTorch, for an unsupported dtype.
    """
    if kernel.promote == PromoteKind.float and not is_floating(common) and default_float != "float32":
        common = default_float
    if common not in kernel.instances:
        raise NotImplementedError(f'"{kernel.name}_cuda" not implemented for \'{common}\'')
    return common


def plan(shape: Sequence[int], strides: Sequence[Sequence[int]], pointers: Sequence[int],
         itemsizes: Sequence[int], vec: int,
         shapes_equal: bool = True) -> tuple[str, int, tuple[int, ...], list[tuple[int, ...]]]:
    """(path, index bits, merged shape, merged strides) for operands already broadcast to `shape`;
    `shapes_equal`: no input was broadcast (otherwise the strided path runs).

    Operand 0 is the output. Pure: the whole decision of which kernel runs, tested without a GPU.
    """
    shape = tuple(shape)
    numel = int(np.prod(shape, dtype=np.int64)) if shape else 1
    dense = [L.is_contiguous(shape, tuple(st)) for st in strides]
    path = L.choose_path(shapes_equal, dense, pointers, itemsizes, vec)
    mshape, mstrides = L.coalesce(shape, [tuple(st) for st in strides])
    bits = L.index_bits(numel, mshape, mstrides)
    return path, bits, mshape, mstrides


def launch(kernel: PointwiseKernel, tensors: Sequence[Any], scalars: Sequence[Any], out: Any = None) -> Any:
    """Run `kernel` on CUDA tensors (and Python scalars); return `out` or a new tensor."""
    from runtime.cuda.device import require_cupy

    cupy = require_cupy()

    from runtime import dtypes
    from runtime.cuda.compile import load_function
    from runtime.cuda.device import sm_count
    from runtime.kernels.checks import check_alpha
    from runtime.memory_overlap import check_write
    from runtime.strides import broadcast_shapes
    from runtime.tensor import Tensor

    wrapped = (scalars[i] for i in kernel.promote_scalars if scalars[i] is not None)
    promoting = tensors if not kernel.follow else [t for i, t in enumerate(tensors) if i not in kernel.follow]
    common = dtypes.result_type(*promoting, *wrapped).name
    key = select_instance(kernel, common, dtypes.get_default_dtype().name)
    out_name, vec = kernel.instances[key]
    in_dtype = dtypes.as_dtype(key)
    out_dtype = dtypes.as_dtype(out_name)
    if kernel.alpha is not None:
        alpha = scalars[kernel.alpha]
        if alpha.__class__ is not int:
            check_alpha(out_dtype, alpha)
    device = next((t.device.index or 0 for t in tensors if t.device.type == "cuda"), 0)
    with cupy.cuda.Device(device):
        arrays = [_as_input(cupy, t, in_dtype, device) for t in tensors]
        shape = tuple(broadcast_shapes(*(a.shape for a in arrays)))
        target = out
        if out is not None:
            check_write(out, tensors)  # Note [Overlap checks before a write]
            if tuple(out.shape) != shape:
                raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast shape "
                                   f"{list(shape)}")
            if not dtypes.can_cast(out_dtype, out.dtype):
                raise RuntimeError(f"result type {out_dtype.name} can't be cast to the desired output type "
                                   f"{out.dtype.name}")
            if out.dtype is not out_dtype:
                target = None  # compute into a temporary, then cast into `out`
        result = target._data if target is not None else F.empty(shape, out_dtype, device)
        numel = int(result.size)
        if numel:
            _run(cupy, kernel, key, vec, shape, result, arrays, scalars, load_function, sm_count(device))
        if out is None:
            return Tensor._wrap(result, out_dtype)
        if target is None:
            from runtime.cuda.copy import copy_array

            copy_array(out._data, out.dtype, result, out_dtype)  # the cast kernel (rounds into bfloat16)
        return out


def _as_input(cupy: Any, t: Any, dtype: Any, device: int) -> Any:
    data = t._data if t.device.type == "cuda" else cupy.asarray(t._data)
    if t.dtype is dtype:
        return data
    if dtype.np is None or t.dtype.np is None:  # Note [bfloat16 on the CUDA backend] (kernels/copy.py)
        from runtime.cuda.copy import copy_array

        converted = F.empty(tuple(data.shape), dtype, device)
        copy_array(converted, dtype, data, t.dtype)
        return converted
    return data.astype(dtype.np)


def _scalar_arg(comp_np: np.dtype, value: Any) -> Any:
    """A Scalar argument in the kernel's compute type. A Python int outside an integer type's range wraps
    as C's conversion does (PyTorch's too: `uint8_tensor == -1` compares with 255, `add(a, b, alpha=-3)` of
    uint8 adds 253 * b), where NumPy's constructor raises OverflowError."""
    if comp_np.kind in "iu" and isinstance(value, int) and not isinstance(value, bool):
        return np.int64(value).astype(comp_np)
    return comp_np.type(value)


def _run(cupy: Any, kernel: PointwiseKernel, key: str, vec: int, shape: tuple[int, ...], result: Any,
         arrays: list[Any], scalars: Sequence[Any], load_function: Any, sms: int) -> None:
    operands = [result, *arrays]
    strides = [broadcast_strides(shape, a.shape, [s // a.itemsize for s in a.strides]) for a in operands]
    pointers = [a.data.ptr for a in operands]
    itemsizes = [a.itemsize for a in operands]
    same_shape = all(a.shape == shape for a in arrays)
    path, bits, mshape, mstrides = plan(shape, strides, pointers, itemsizes, vec, same_shape)
    numel = int(result.size)
    index_np = np.uint32 if bits == 32 else np.uint64
    # The kernel's comp_t: bool and integer inputs of a `promote: float` op compute in float (found by the
    # emulator: packing the scalar in the input's type made the kernel read a float from a 1-byte argument,
    # so uint8 x / 2 gave inf): Note [Floating dtypes and opmath]. Such an instance outputs that float dtype.
    comp_np = np.dtype(compute_dtype(kernel.promote, key, kernel.instances[key][0]))
    scalar_args = [_scalar_arg(comp_np, s) for s in scalars]
    fn = load_function(kernel.source, f"{kernel.name}__{key}__{path}{bits}", result.device.id)
    if path == "strided":
        args = (index_np(numel), L.pack_strided(mshape, mstrides, bits), *operands, *scalar_args)
        work = numel
    else:
        args = (index_np(numel), *operands, *scalar_args)
        work = -(-numel // vec) if path == "vec" else numel
    cfg = L.launch_config(work, sms)
    fn((cfg.grid,), (cfg.block,), args, stream=cupy.cuda.get_current_stream())
