"""Pure launch arithmetic for generated kernels: fast-division constants, dimension merging, the packed
strided-operand struct, index width, path choice and grid size. No CuPy here: all of it is tested on CPU.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

# The one contiguity rule, PyTorch's (an empty tensor is contiguous), shared with the Tensor's is_contiguous.
from runtime.strides import is_contiguous as is_contiguous

Shape = tuple[int, ...]
Strides = tuple[int, ...]

MAX_DIMS = 16  # OPGEN_MAX_DIMS in runtime/cuda/include/opgen_types.cuh
INT32_LIMIT = 2**31 - 1  # Note [Fast division]: 32-bit magic numbers are exact below 2^31
THREADS = 256
# Grid-stride kernels need only enough blocks to fill the device: a few waves of full occupancy.
BLOCKS_PER_SM = 8


def int_divider(d: int, bits: int) -> tuple[int, int]:
    """(magic, shift): n // d == (mulhi(n, magic) + n) >> shift for n < 2^(bits-1) (Note [Fast division])."""
    if d < 1 or d >= 2 ** (bits - 1):
        raise ValueError(f"divisor {d} out of range for {bits}-bit fast division")
    shift = (d - 1).bit_length()  # ceil(log2 d); 0 for d == 1
    magic = ((1 << bits) * ((1 << shift) - d)) // d + 1
    return magic, shift


def fast_div(n: int, magic: int, shift: int, bits: int) -> int:
    """The device's quotient, emulated with the same fixed-width arithmetic."""
    mask = (1 << bits) - 1
    hi = (n * magic) >> bits
    return ((hi + n) & mask) >> shift


def coalesce(shape: Shape, strides: Sequence[Strides]) -> tuple[Shape, list[Strides]]:
    """Merge neighbouring dims that every operand walks as one, and drop size-1 dims.

    Dims stay outermost first. Dim d-1 and d merge when, for every operand, stride[d-1] == stride[d] *
    size[d]. An empty iteration space keeps its shape (the launcher returns before using it).
    """
    if any(s == 0 for s in shape):
        return tuple(shape), [tuple(st) for st in strides]
    dims = [(size, [st[d] for st in strides]) for d, size in enumerate(shape) if size != 1]
    merged: list[tuple[int, list[int]]] = []
    for size, st in dims:
        if merged:
            prev_size, prev_st = merged[-1]
            if all(p == s * size for p, s in zip(prev_st, st, strict=True)):
                merged[-1] = (prev_size * size, st)
                continue
        merged.append((size, st))
    new_shape = tuple(size for size, _ in merged)
    new_strides = [tuple(st[k] for _, st in merged) for k in range(len(strides))]
    return new_shape, new_strides


def max_offset(shape: Shape, strides: Strides) -> int:
    """The largest element offset an operand reaches (strides are non-negative)."""
    return sum((n - 1) * s for n, s in zip(shape, strides, strict=True)) if all(shape) else 0


_FORCED_BITS: list[int | None] = [None]


@contextmanager
def force_index_bits(bits: int | None) -> Iterator[None]:
    """Within the block, launch the 64-bit index instances whatever the sizes (`bits=64`), so that tests
    run them on small inputs; `None` restores the size-based choice. A launch option: no kernel changes."""
    if bits not in (None, 64):
        raise ValueError(f"force_index_bits: only 64 can be forced (32 is chosen when it fits), got {bits}")
    previous, _FORCED_BITS[0] = _FORCED_BITS[0], bits
    try:
        yield
    finally:
        _FORCED_BITS[0] = previous


def index_width(fits_in_31_bits: bool) -> int:
    """32 or 64 for kernels whose launcher checks the sizes itself (reductions, softmax, arange)."""
    return 32 if fits_in_31_bits and _FORCED_BITS[0] is None else 64


def index_bits(numel: int, shape: Shape, strides: Sequence[Strides]) -> int:
    """32 when every linear index and every operand offset fits in 31 bits, else 64 (or when forced)."""
    if _FORCED_BITS[0] is not None:
        return _FORCED_BITS[0]
    if numel <= INT32_LIMIT and all(max_offset(shape, st) <= INT32_LIMIT for st in strides):
        return 32
    return 64


def strided_dtype(bits: int, nargs: int) -> np.dtype:
    """NumPy layout of `opgen::Strided<index_t, nargs>`: index_t only (Note [Strided operands])."""
    index = np.uint32 if bits == 32 else np.uint64
    return np.dtype([("v", index, (1 + 3 * MAX_DIMS + MAX_DIMS * nargs,))])


def pack_strided(shape: Shape, strides: Sequence[Strides], bits: int) -> np.void:
    """The kernel argument `opgen::Strided` for an iteration space (outermost first) and operand strides.

    `strides[0]` is the output's. Dims are stored innermost first; strides must be non-negative.
    """
    ndim, nargs = len(shape), len(strides)
    if ndim > MAX_DIMS:
        raise ValueError(f"a CUDA pointwise kernel handles at most {MAX_DIMS} dims after merging, got {ndim}")
    if any(s < 0 for st in strides for s in st):
        raise ValueError("negative strides are not supported by CUDA kernels")
    flat = [0] * (1 + 3 * MAX_DIMS + MAX_DIMS * nargs)
    flat[0] = ndim
    for d, size in enumerate(reversed(shape)):
        magic, shift = int_divider(size, bits)
        flat[1 + d] = size
        flat[1 + MAX_DIMS + d] = magic
        flat[1 + 2 * MAX_DIMS + d] = shift
        for k in range(nargs):
            flat[1 + 3 * MAX_DIMS + d * nargs + k] = strides[k][ndim - 1 - d]
    dtype = strided_dtype(bits, nargs)
    arr = np.zeros((), dtype)
    arr["v"] = np.array(flat, dtype=dtype["v"].base)
    return arr[()]


def offsets(linear: int, packed: np.void) -> list[int]:
    """Emulate `Strided::offsets` on the packed struct (the CPU twin of the device code, for tests)."""
    flat = [int(x) for x in packed["v"]]
    bits = packed["v"].dtype.itemsize * 8
    nargs = (len(flat) - 1 - 3 * MAX_DIMS) // MAX_DIMS
    out = [0] * nargs
    for d in range(flat[0]):
        size, magic, shift = flat[1 + d], flat[1 + MAX_DIMS + d], flat[1 + 2 * MAX_DIMS + d]
        q = fast_div(linear, magic, shift, bits)
        coord = linear - q * size
        linear = q
        for k in range(nargs):
            out[k] += coord * flat[1 + 3 * MAX_DIMS + d * nargs + k]
    return out


@dataclass(frozen=True)
class LaunchConfig:
    grid: int
    block: int


def launch_config(work_items: int, sm_count: int, threads: int = THREADS) -> LaunchConfig:
    """1-D grid for a grid-stride loop over `work_items`: as many blocks as useful, at most a few waves."""
    blocks = max(1, min(-(-work_items // threads), sm_count * BLOCKS_PER_SM))
    return LaunchConfig(blocks, threads)


def choose_path(shapes_equal: bool, contiguous: Sequence[bool], pointers: Sequence[int],
                itemsizes: Sequence[int], vec: int) -> str:
    """`vec` when every operand is dense, same-shaped and aligned to a V-element pack; `contig` when dense
    but misaligned; `strided` otherwise (broadcasting, views, transposes)."""
    if not shapes_equal or not all(contiguous):
        return "strided"
    if vec > 1 and all(p % (vec * size) == 0 for p, size in zip(pointers, itemsizes, strict=True)):
        return "vec"
    return "contig"


def broadcast_strides(shape: Sequence[int], tshape: Sequence[int],
                      tstrides: Sequence[int]) -> tuple[int, ...]:
    """Element strides of a tensor of `tshape` broadcast to `shape` (0 along broadcast dims)."""
    lead = len(shape) - len(tshape)
    out = [0] * lead
    for n, s in zip(tshape, tstrides, strict=True):
        out.append(0 if n == 1 else s)
    return tuple(out)
