"""What the CUDA backend asks of the composite kernels it shares with the CPU.

Note [Composite kernels and bfloat16]
A CompositeExplicitAutograd kernel works on `t._data`, a NumPy or CuPy array; neither library has
bfloat16, so a bfloat16 CUDA tensor's array holds its raw bits as uint16 (Note [bfloat16 on the CUDA
backend] in runtime/kernels/copy.py), and arithmetic, ordering or NumPy promotion on it would be silently
wrong. So the CUDA backend guards the CUDA entry of every such op (`Dispatcher.guard_alias_kernels`): the
guarded kernel refuses bfloat16 arguments, except for the ops of BFLOAT16_SAFE, which convert through the
cast kernels (copies, fills, random fills) or only move, select or zero-fill elements, which is exact on
the bits (+0.0 is all zero bits). CUDA kernels proper (the generated ones, runtime/cuda/ops.py) are not
guarded; neither are the CPU entries (no CPU tensor is bfloat16).
"""

from __future__ import annotations

from typing import Any

from runtime.dispatcher import Kernel, Operator, dispatcher
from runtime.dtypes import bfloat16

BFLOAT16_SAFE = frozenset({
    "_to_copy", "copy_", "fill_.Scalar", "zero_", "new_empty", "new_full", "new_ones", "new_zeros",
    "normal_", "uniform_", "random_.from",
    "as_strided", "clone", "diagonal", "expand", "permute", "select.int", "slice.Tensor", "squeeze",
    "squeeze.dim", "t", "transpose.int", "unsqueeze", "view", "select_backward", "slice_backward",
    "diagonal_backward", "flip", "roll", "repeat", "tril", "triu", "index_select", "gather", "embedding",
})


def refusing_bfloat16(op: Operator, kernel: Kernel) -> Kernel:
    """`kernel` behind a check that no tensor argument is bfloat16, unless `op` is in BFLOAT16_SAFE."""
    if op.name in BFLOAT16_SAFE:
        return kernel
    name, positions = op.name.split(".")[0], op.tensor_positions

    def kernel_without_bfloat16(*args: Any) -> Any:
        for i in positions:
            if i < len(args):
                arg = args[i]
                for v in (arg if isinstance(arg, list | tuple) else (arg,)):
                    if getattr(v, "_dtype", None) is bfloat16:
                        raise NotImplementedError(
                            f"\"{name}_cuda\" not implemented for 'bfloat16': opgen's kernel for it works on "
                            "the array library's data, which holds bfloat16 as raw uint16 bits; convert the "
                            "tensor first, e.g. tensor.float()")
        return kernel(*args)

    kernel_without_bfloat16.__wrapped__ = kernel  # type: ignore[attr-defined]
    return kernel_without_bfloat16


dispatcher.guard_alias_kernels("CUDA", "CompositeExplicitAutograd", refusing_bfloat16)
