"""Strided layout as small pure functions on tuples of ints (MiniTorch style).

Sizes and strides are in elements; offsets are element offsets into storage. Every view op returns the new
geometry and never touches data. Errors follow PyTorch: RuntimeError for shape problems, IndexError for an
out-of-range dim or index, and each message names the shapes or dims involved.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

Shape = tuple[int, ...]
Strides = tuple[int, ...]
Index = tuple[int, ...]


def _fmt(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def numel(shape: Sequence[int]) -> int:
    """The number of elements of a tensor of this shape (1 for a 0-d tensor)."""
    return math.prod(shape)


def wrap_dim(dim: int, ndim: int) -> int:
    """Turn a possibly negative `dim` into one in [0, ndim). A 0-d tensor accepts -1 and 0 (as PyTorch)."""
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], but got {dim})")
    return dim + bound if dim < 0 else dim


def contiguous_strides(shape: Sequence[int]) -> Strides:
    """Row-major strides; a size-0 dim counts as size 1, as in PyTorch."""
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * max(shape[d + 1], 1)
    return tuple(strides)


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """PyTorch's definition: row-major up to the strides of size-1 dims; an empty tensor is contiguous."""
    if numel(shape) == 0:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides), strict=True):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def is_non_overlapping_and_dense(shape: Sequence[int], strides: Sequence[int], unit: int = 1) -> bool:
    """Whether the elements fill their memory without gaps or overlaps, in some order of the dims: taken
    from the smallest stride up, each dim of size != 1 steps by the span of those before it (PyTorch's
    `is_non_overlapping_and_dense`). `unit` is the stride of one element (an array's itemsize for its byte
    strides). A negative stride is never dense; a dim of size 0 is dense only where its stride fits."""
    expected = unit
    for stride, size in sorted((st, n) for st, n in zip(strides, shape, strict=True) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def infer_size(shape: Sequence[int], numel_: int) -> Shape:
    """Resolve one -1 in `shape` so that it holds `numel_` elements (view/reshape's size argument)."""
    known = 1
    infer_dim = None
    for d, size in enumerate(shape):
        if size == -1:
            if infer_dim is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer_dim = d
        elif size >= 0:
            known *= size
        else:
            raise RuntimeError(f"invalid shape dimension {size} in shape {_fmt(shape)}")
    result = list(shape)
    if infer_dim is None:
        if known == numel_:
            return tuple(result)
    elif known == 0:
        raise RuntimeError(
            f"cannot reshape tensor of {numel_} elements into shape {_fmt(shape)} because the "
            "unspecified dimension size -1 can be any value and is ambiguous"
        )
    elif numel_ % known == 0:
        result[infer_dim] = numel_ // known
        return tuple(result)
    raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel_}")


def view_strides(old_shape: Sequence[int], old_strides: Sequence[int], new_shape: Sequence[int]) -> Strides | None:
    """The strides that view `old` memory as `new_shape`, or None when no view exists (reshape then copies).

    `new_shape` must be fully specified (see infer_size) and hold as many elements as `old_shape`. This is
    PyTorch's computeStride: walk both shapes from the right in "chunks" of old dims that are contiguous with
    each other; each chunk must be matched exactly by a run of new dims.
    """
    count = numel(old_shape)
    if numel(new_shape) != count:
        raise RuntimeError(f"shape '{_fmt(new_shape)}' is invalid for input of size {count}")
    if len(old_shape) == 0:
        return (1,) * len(new_shape)
    if count == 0:
        if tuple(old_shape) == tuple(new_shape):
            return tuple(old_strides)
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        # a chunk ends at dim 0, or where the next-outer dim is not contiguous with this chunk
        if tensor_d == 0 or (
            old_shape[tensor_d - 1] != 1 and old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def broadcast_shapes(*shapes: Sequence[int]) -> Shape:
    """The shape all `shapes` broadcast to (NumPy/PyTorch rules: align right, size 1 stretches)."""
    result: Shape = ()
    for i, shape in enumerate(shapes):
        result = _broadcast_pair(result, tuple(shape)) if i else tuple(shape)
    for size in result:
        if size < 0:
            raise RuntimeError(f"broadcast_shapes: negative size in shape {_fmt(result)}")
    return result


def _broadcast_pair(a: Shape, b: Shape) -> Shape:
    ndim = max(len(a), len(b))
    out = [0] * ndim
    for i in range(ndim):
        offset = ndim - 1 - i
        size_a = a[len(a) - 1 - offset] if offset < len(a) else 1
        size_b = b[len(b) - 1 - offset] if offset < len(b) else 1
        if size_a != size_b and size_a != 1 and size_b != 1:
            raise RuntimeError(
                f"shapes {_fmt(a)} and {_fmt(b)} cannot be broadcast: the size of tensor a ({size_a}) must "
                f"match the size of tensor b ({size_b}) at non-singleton dimension {i}"
            )
        out[i] = size_b if size_a == 1 else size_a
    return tuple(out)


def expand(shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]) -> tuple[Shape, Strides]:
    """Broadcast to `new_shape` without copying; stretched and new leading dims get stride 0.

    A -1 in `new_shape` keeps that dim's size."""
    ndim, old_ndim = len(new_shape), len(shape)
    if ndim < old_ndim:
        raise RuntimeError(
            f"expand: the number of sizes provided ({ndim}) must be greater or equal to the number of "
            f"dimensions in the tensor ({old_ndim}); tensor sizes {_fmt(shape)}, "
            f"target sizes {_fmt(new_shape)}"
        )
    out_shape = [0] * ndim
    out_strides = [0] * ndim
    for i in range(ndim - 1, -1, -1):
        d = old_ndim - ndim + i  # the matching old dim, < 0 for a new leading dim
        size = shape[d] if d >= 0 else 1
        if d >= 0:
            stride = strides[d]
        else:
            stride = out_shape[i + 1] * out_strides[i + 1] if i + 1 < ndim else 0
        target = new_shape[i]
        if target == -1:
            if d < 0:
                raise RuntimeError(
                    f"expand: the expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                    f"dimension {i}; target sizes {_fmt(new_shape)}"
                )
            target = size
        elif target < 0:
            raise RuntimeError(f"expand: invalid size {target} at dimension {i}; target sizes {_fmt(new_shape)}")
        if size != target:
            if size != 1:
                raise RuntimeError(
                    f"expand: the expanded size of the tensor ({target}) must match the existing size "
                    f"({size}) at non-singleton dimension {i}.  Target sizes: {_fmt(new_shape)}.  "
                    f"Tensor sizes: {_fmt(shape)}"
                )
            stride = 0
        out_shape[i] = target
        out_strides[i] = stride
    return tuple(out_shape), tuple(out_strides)


def permute(shape: Sequence[int], strides: Sequence[int], dims: Sequence[int]) -> tuple[Shape, Strides]:
    """Reorder dims: output dim i is input dim dims[i]."""
    ndim = len(shape)
    if len(dims) != ndim:
        raise RuntimeError(
            f"permute: number of dims don't match: the tensor has shape {_fmt(shape)} ({ndim} dims) "
            f"but dims {_fmt(dims)} has {len(dims)}"
        )
    wrapped = [wrap_dim(d, ndim) for d in dims]
    if len(set(wrapped)) != ndim:
        raise RuntimeError(f"permute: repeated dim in dims {_fmt(dims)} for a tensor of shape {_fmt(shape)}")
    return tuple(shape[d] for d in wrapped), tuple(strides[d] for d in wrapped)


def transpose(shape: Sequence[int], strides: Sequence[int], dim0: int, dim1: int) -> tuple[Shape, Strides]:
    """Swap two dims."""
    ndim = len(shape)
    dim0, dim1 = wrap_dim(dim0, ndim), wrap_dim(dim1, ndim)
    new_shape, new_strides = list(shape), list(strides)
    if ndim:
        new_shape[dim0], new_shape[dim1] = shape[dim1], shape[dim0]
        new_strides[dim0], new_strides[dim1] = strides[dim1], strides[dim0]
    return tuple(new_shape), tuple(new_strides)


def _check_not_0d(shape: Sequence[int], op: str) -> None:
    if len(shape) == 0:
        raise IndexError(f"{op}() cannot be applied to a 0-dim tensor.")


def select(
    shape: Sequence[int], strides: Sequence[int], offset: int, dim: int, index: int
) -> tuple[Shape, Strides, int]:
    """Index one position of `dim` and drop that dim (`t[..., index, ...]`); a negative index wraps."""
    _check_not_0d(shape, "select")
    dim = wrap_dim(dim, len(shape))
    size = shape[dim]
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {dim} with size {size}")
    if index < 0:
        index += size
    new_shape = tuple(shape[:dim]) + tuple(shape[dim + 1 :])
    new_strides = tuple(strides[:dim]) + tuple(strides[dim + 1 :])
    return new_shape, new_strides, offset + index * strides[dim]


def slice_dim(
    shape: Sequence[int],
    strides: Sequence[int],
    offset: int,
    dim: int,
    start: int | None,
    stop: int | None,
    step: int | None = 1,
) -> tuple[Shape, Strides, int]:
    """`t[..., start:stop:step, ...]` on one dim; start/stop clamp as in Python, step must be > 0."""
    _check_not_0d(shape, "slice")
    if step is None:
        step = 1
    if step <= 0:
        raise ValueError("step must be greater than zero")
    dim = wrap_dim(dim, len(shape))
    start, stop, step = slice(start, stop, step).indices(shape[dim])
    length = max(0, (stop - start + step - 1) // step)
    new_shape, new_strides = list(shape), list(strides)
    new_shape[dim] = length
    new_strides[dim] = strides[dim] * step
    return tuple(new_shape), tuple(new_strides), offset + start * strides[dim]


def narrow(
    shape: Sequence[int], strides: Sequence[int], offset: int, dim: int, start: int, length: int
) -> tuple[Shape, Strides, int]:
    """The `length` positions of `dim` from `start` (which may be negative); no clamping, errors instead."""
    if length < 0:
        raise RuntimeError(f"narrow(): length must be non-negative, got {length}")
    if len(shape) == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, len(shape))
    size = shape[dim]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(
            f"narrow(): start ({start}) + length ({length}) exceeds dimension size ({size}) of dimension {dim}"
        )
    new_shape = list(shape)
    new_shape[dim] = length
    return tuple(new_shape), tuple(strides), offset + start * strides[dim]


def diagonal(
    shape: Sequence[int], strides: Sequence[int], offset: int, diag_offset: int, dim1: int, dim2: int
) -> tuple[Shape, Strides, int]:
    """The diagonal of the (dim1, dim2) planes, appended as the last dim (torch.diagonal / numpy.diagonal).

    `diag_offset` > 0 is above the main diagonal (towards higher dim2 indices), < 0 below it."""
    ndim = len(shape)
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    if diag_offset >= 0:
        diag_size = max(min(shape[d1], shape[d2] - diag_offset), 0)
        start = diag_offset * strides[d2]
    else:
        diag_size = max(min(shape[d1] + diag_offset, shape[d2]), 0)
        start = -diag_offset * strides[d1]
    if diag_size == 0:
        start = 0  # as PyTorch: an empty diagonal keeps the offset
    keep = [d for d in range(ndim) if d != d1 and d != d2]
    new_shape = tuple(shape[d] for d in keep) + (diag_size,)
    new_strides = tuple(strides[d] for d in keep) + (strides[d1] + strides[d2],)
    return new_shape, new_strides, offset + start


def squeeze(
    shape: Sequence[int], strides: Sequence[int], dims: int | Sequence[int] | None = None
) -> tuple[Shape, Strides]:
    """Drop size-1 dims: all of them (dims=None) or those among `dims`; other dims in `dims` stay."""
    ndim = len(shape)
    if dims is None:
        drop = {d for d in range(ndim) if shape[d] == 1}
    else:
        listed = [dims] if isinstance(dims, int) else list(dims)
        drop = set()
        seen = set()
        for d in listed:
            d = wrap_dim(d, ndim)
            if d in seen:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims {_fmt(listed)}")
            seen.add(d)
            if ndim and shape[d] == 1:
                drop.add(d)
    keep = [d for d in range(ndim) if d not in drop]
    return tuple(shape[d] for d in keep), tuple(strides[d] for d in keep)


def unsqueeze(shape: Sequence[int], strides: Sequence[int], dim: int) -> tuple[Shape, Strides]:
    """Insert a size-1 dim at `dim` (which ranges over [-ndim-1, ndim])."""
    ndim = len(shape)
    dim = wrap_dim(dim, ndim + 1)
    stride = shape[dim] * strides[dim] if dim < ndim else 1
    return (
        tuple(shape[:dim]) + (1,) + tuple(shape[dim:]),
        tuple(strides[:dim]) + (stride,) + tuple(strides[dim:]),
    )


def flatten_shape(shape: Sequence[int], start_dim: int = 0, end_dim: int = -1) -> Shape:
    """The shape after merging dims start_dim..end_dim (inclusive) into one; a 0-d tensor becomes [1]."""
    ndim = len(shape)
    start, end = wrap_dim(start_dim, ndim), wrap_dim(end_dim, ndim)
    if start > end:
        raise RuntimeError(f"flatten() has invalid args: start_dim ({start_dim}) cannot come after end_dim ({end_dim})")
    if ndim == 0:
        return (1,)
    return tuple(shape[:start]) + (numel(shape[start : end + 1]),) + tuple(shape[end + 1 :])


def unflatten_shape(shape: Sequence[int], dim: int, sizes: Sequence[int]) -> Shape:
    """The shape after splitting `dim` into `sizes` (one of which may be -1)."""
    ndim = len(shape)
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if ndim == 0:
        raise RuntimeError("unflatten: cannot be applied to a 0-dim tensor")
    dim = wrap_dim(dim, ndim)
    try:
        inferred = infer_size(sizes, shape[dim])
    except RuntimeError as e:
        if str(e) == "only one dimension can be inferred":
            raise
        raise RuntimeError(
            f"unflatten: provided sizes {_fmt(sizes)} don't multiply up to the size of dim {dim} "
            f"({shape[dim]}) in the input tensor of shape {_fmt(shape)}"
        ) from None
    return tuple(shape[:dim]) + inferred + tuple(shape[dim + 1 :])


def index_to_position(index: Sequence[int], strides: Sequence[int], offset: int = 0) -> int:
    """The storage position of a multi-index."""
    return offset + sum(i * s for i, s in zip(index, strides, strict=True))


def broadcast_index(big_index: Sequence[int], big_shape: Sequence[int], shape: Sequence[int]) -> Index:
    """The index into a tensor of `shape` that broadcasting reads for `big_index` of `big_shape`."""
    lead = len(big_shape) - len(shape)
    return tuple(0 if size == 1 else big_index[lead + d] for d, size in enumerate(shape))


def dense_strides_like(shape: Sequence[int], strides: Sequence[int]) -> Strides:
    """The strides of a dense copy of a tensor that keep its dims' order in memory (PyTorch's preserve_format):
    its own strides when dense, else dims ordered from the smallest stride up, a stride-0 (broadcast) dim
    leaving the order as it stands (row-major among such dims), equal strides broken by the larger size."""
    def should_swap(d0: int, d1: int) -> int:
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return 1 if s0 > s1 else -1
        return 1 if shape[d0] > shape[d1] else 0

    return dense_in_order(shape, should_swap)


def dense_in_order(shape: Sequence[int], should_swap: Callable[[int, int], int]) -> Strides:
    """Dense strides whose dims are ordered, fastest first, by an insertion sort (from row-major) that
    swaps two dims where `should_swap(slower, faster)` > 0 and stops at the first pair it says < 0, as
    TensorIterator's does; 0 leaves the pair and goes on."""
    n = len(shape)
    perm = list(range(n - 1, -1, -1))  # perm[0]: the fastest-moving dim
    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    out = [0] * n
    step = 1
    for d in perm:
        out[d] = step
        step *= max(shape[d], 1)
    return tuple(out)
