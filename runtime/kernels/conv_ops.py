"""2-D convolution kernels (CompositeExplicitAutograd, NumPy or CuPy): the forward as columns and a stack of
per-sample GEMMs, and the two backward products (input gradient, weight gradient), each the other's and the
forward's derivative (derivatives.yaml); plus the window view and the window fold that im2col/col2im
(runtime/kernels/nn_ops.py) share with them.

Note [Convolution column layout]
The columns of a convolution are im2col's (N, C*kh*kw, L) array (L = OH*OW): row (c, i, j) of sample n holds
input channel c at kernel offset (i, j) for every output position; one copy of a strided window view makes
it. Each product is then a stack of N small GEMMs on contiguous operands (per group): output
(N, O, L) = W (O, C*kh*kw) @ cols[n], column gradient W^T @ g[n], weight gradient the sum over n of
g[n] @ cols[n]^T; the output and the column gradient come out in NCHW order with no transpose. With many
channels the columns are taken channels last and each product is one GEMM over the whole batch (Note
[Channels-last convolution columns]), short rows are taken at padded width, channel-major, for one GEMM
over the batch (Note [Convolution rows at padded width]), and the stride-1 input gradient is one GEMM too
(Note [Input gradient by kernel rows], Note [Input gradient as a convolution]). (A single wide GEMM was
once measured 7x slower: OpenBLAS had threaded it on the shared 2-core machine. With one BLAS thread, as
the benchmarks run, it is the faster form: Note [One GEMM or one per sample].) The weight gradient makes
its columns again. Temporaries live in per-thread scratch buffers (Note [Convolution scratch buffers]).
Once the C++ conv/pool kernels are loaded (Note [Compiled convolution and pooling kernels],
runtime/kernels/conv_pool_cpp.py) the columns and the input gradient's fold are theirs, in the layouts of
Note [Layouts of the compiled columns]; the NumPy forms below serve the rest (other dtypes, CuPy arrays, no
compiler, OPGEN_EAGER_CPP=0).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import dtypes
from runtime.kernels import conv_pool_cpp
from runtime.kernels._xp import as_tuple, strided_view, wrap, xp_of
from runtime.tensor import Tensor
from runtime.threads import one_blas_thread

# Note [Convolution scratch buffers]
# The padded copies, columns and GEMM products that a convolution kernel makes and drops before it returns
# are views of per-thread buffers that live on between calls (one per slot below, grown to the largest
# request up to _SCRATCH_LIMIT bytes; larger ones are fresh arrays). Fresh multi-megabyte NumPy arrays come
# from mmap or from heap memory that glibc has just given back, whenever its heuristics say so, and then
# every page is faulted in on first touch: the cnn's second convolution alone (bench/bench_conv.py) made
# 2000 page faults a step, which doubled its time, and none with these buffers. (A whole training step
# with PyTorch in the same process still can: glibc then returns and faults in the memory of other arrays,
# the relu's or the pooling's, and which ones depends on everything else the process allocated.) Only NumPy
# arrays use them (CuPy's come from the caching allocator). Nothing a kernel returns is a scratch view, and a
# kernel holds a slot only until it returns, never across a call that takes the same slot.
PAD, COLS, PRODUCT = 0, 1, 2
_SCRATCH_LIMIT = 32 << 20


class _Scratch(threading.local):
    def __init__(self) -> None:
        self.buffers: list[Any] = [None, None, None]


_SCRATCH = _Scratch()


def _scratch(slot: int, shape: Sequence[int], dtype: Any, like: Any) -> Any:
    """An uninitialised C-contiguous array of `shape` and `dtype` of `like`'s kind, over this thread's buffer
    `slot` (valid until the next call for that slot): Note [Convolution scratch buffers]."""
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    if like.__class__ is not np.ndarray or nbytes > _SCRATCH_LIMIT:
        return xp_of(like).empty(tuple(shape), dtype=dtype)
    buf = _SCRATCH.buffers[slot]
    if buf is None or buf.nbytes < nbytes:
        buf = _SCRATCH.buffers[slot] = np.empty(nbytes, np.uint8)
    return buf[:nbytes].view(dtype).reshape(shape)


def _zeroed(slot: int, shape: Sequence[int], dtype: Any, like: Any) -> Any:
    """`_scratch`, filled with zeros."""
    out = _scratch(slot, shape, dtype, like)
    out.fill(0)
    return out


def _scratch_copy(slot: int, view: Any) -> Any:
    """`view` copied into scratch `slot` (C-contiguous)."""
    out = _scratch(slot, view.shape, view.dtype, view)
    out[...] = view
    return out


def _product(a: Any, b: Any) -> Any:
    """The 2-D product a @ b in scratch slot PRODUCT."""
    return xp_of(a).matmul(a, b, out=_scratch(PRODUCT, (a.shape[0], b.shape[1]), a.dtype, a))


def out_size(shape: Sequence[int], kernel: Sequence[int], dilation: Sequence[int], padding: Sequence[int],
             stride: Sequence[int]) -> tuple[int, int]:
    """(OH, OW) of a convolution of an (..., H, W) input; a clear error for bad geometry."""
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    oh = (shape[-2] + 2 * padding[0] - dilation[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    ow = (shape[-1] + 2 * padding[1] - dilation[1] * (kernel[1] - 1) - 1) // stride[1] + 1
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"Given input size: {tuple(shape[-3:])}. Calculated output size: ({oh}x{ow}). "
                           f"Output size is too small")
    return oh, ow


def padded(a: Any, padding: Sequence[int]) -> Any:
    """`a` (..., H, W) with `padding` zeros around its last two dims, in scratch slot PAD (`a` itself without
    padding)."""
    if not padding[0] and not padding[1]:
        return a
    h, w = a.shape[-2:]
    out = _zeroed(PAD, (*a.shape[:-2], h + 2 * padding[0], w + 2 * padding[1]), a.dtype, a)
    out[..., padding[0]:padding[0] + h, padding[1]:padding[1] + w] = a
    return out


def windows(a: Any, kernel: Sequence[int], dilation: Sequence[int], stride: Sequence[int], oh: int, ow: int) -> Any:
    """A strided view (..., kh, kw, OH, OW) of `a` (..., H, W): element (i, j, y, x) is
    a[..., y * stride + i * dilation, x * stride + j * dilation]. No copy; the caller has checked the geometry."""
    sh, sw = a.strides[-2:]
    return strided_view(a, (*a.shape[:-2], kernel[0], kernel[1], oh, ow),
                        (*a.strides[:-2], sh * dilation[0], sw * dilation[1], sh * stride[0], sw * stride[1]))


def copied(view: Any) -> Any:
    """A new C-contiguous array holding `view` (one copy, never a view of its base)."""
    out = xp_of(view).empty(view.shape, dtype=view.dtype)
    out[...] = view
    return out


def fold_add(out: Any, cols: Any, kernel: Sequence[int], dilation: Sequence[int], stride: Sequence[int]) -> None:
    """The adjoint of `windows`: add cols (..., kh, kw, OH, OW) into `out` (..., H, W), one strided slice per
    kernel offset (overlapping windows add up)."""
    oh, ow = cols.shape[-2:]
    for i in range(kernel[0]):
        rows = slice(i * dilation[0], i * dilation[0] + stride[0] * (oh - 1) + 1, stride[0])
        for j in range(kernel[1]):
            w0 = j * dilation[1]
            out[..., rows, w0:w0 + stride[1] * (ow - 1) + 1:stride[1]] += cols[..., i, j, :, :]


def _geometry(stride: Any, padding: Any, dilation: Any) -> tuple[tuple[int, ...], ...]:
    return as_tuple(stride, 2), as_tuple(padding, 2), as_tuple(dilation, 2)


def unfold_columns(x: Any, kernel: Sequence[int], st: Sequence[int], pad: Sequence[int], dil: Sequence[int], oh: int,
                   ow: int, in_scratch: bool = False) -> Any:
    """The (N, C*kh*kw, OH*OW) columns of x (N, C, H, W) (im2col): Note [Convolution column layout]. One copy
    of a strided window view, a new array or, `in_scratch`, in scratch slot COLS; `x` may have any strides."""
    n, c = x.shape[:2]
    if not in_scratch:  # Note [Compiled convolution and pooling kernels]
        cols = conv_pool_cpp.im2col(x, kernel, st, pad, dil, oh, ow, False, lambda shape: np.empty(shape, x.dtype))
        if cols is not None:
            return cols
    view = windows(padded(x, pad), kernel, dil, st, oh, ow)
    cols = _scratch_copy(COLS, view) if in_scratch else copied(view)
    return cols.reshape(n, c * kernel[0] * kernel[1], oh * ow)


# Note [Convolution rows at padded width]
# With stride 1, the window at kernel offset (i, j) of a padded plane (Hp, Wp) read row-major is one
# contiguous run: output (y, x) reads flat element y*Wp + x + s, s = i*dil*Wp + j*dil. So the columns of an
# offset can be taken as rows of padded width, OH*Wp long (x in [OW, Wp) are junk that the forward drops),
# and the fold of the input gradient is kh*kw adds of contiguous runs (kh with one GEMM over the batch:
# Note [Input gradient by kernel rows]): long inner loops instead of OW-long ones (3x faster at the
# benchmarks' sizes). The forward takes them for short rows, channel-major (C, kh, kw, N, OH*Wp), so that one
# GEMM covers the batch (the cnn's second layer: 0.83x its channels-last columns). In the input gradient the
# output gradient is padded with zero junk columns, which the GEMM multiplies by the weight: only finite
# weights take this path (inf * 0 is NaN).
# The weight gradient keeps exact columns (zeroing the junk and the larger GEMM cost more than they save).
# A plane's runs may read `slack` = (kw - 1) * dil elements past its end: the buffer has them, zero.
def _wide(x: Any, kernel: Sequence[int], pad: Sequence[int], dil: Sequence[int], oh: int,
          channel_major: bool = False) -> Any:
    """The (N, C, kh, kw, OH*Wp) wide-row window view of x (N, C, H, W), over a zero-padded buffer (scratch
    slot PAD); with `channel_major` the buffer is (C, N, ...) and the view (C, kh, kw, N, OH*Wp), whose copy
    is the columns of one GEMM over the whole batch."""
    n, c, h, w = x.shape
    hp, wp = h + 2 * pad[0], w + 2 * pad[1]
    lead = (c, n) if channel_major else (n, c)
    buf = _zeroed(PAD, (*lead, hp * wp + (kernel[1] - 1) * dil[1]), x.dtype, x)
    buf[:, :, :hp * wp].reshape(*lead, hp, wp)[:, :, pad[0]:pad[0] + h, pad[1]:pad[1] + w] = (
        x.transpose(1, 0, 2, 3) if channel_major else x)
    item = buf.itemsize
    taps = (dil[0] * wp * item, dil[1] * item)
    if channel_major:
        return strided_view(buf, (c, kernel[0], kernel[1], n, oh * wp), (buf.strides[0], *taps, buf.strides[1], item))
    return strided_view(buf, (n, c, kernel[0], kernel[1], oh * wp), (*buf.strides[:2], *taps, item))


# Note [Input gradient as a convolution]
# With stride 1 the input gradient is itself a convolution: of the output gradient, padded by
# (k - 1) * dil - pad, with the weight flipped in both spatial dims and its two channel dims swapped
# (O, C) -> (C, O), at the same dilation. Taken through `_convolve` (groups == 1, padding at most
# (k - 1) * dil), it has no fold at all, and where wide rows would carry more than 1/8 of junk (small planes:
# the demo's 6x6, 1.6-1.7x faster at batch 64) it beats the wide-row fold below; where they carry less (the cnn's
# 14x14) the fold is faster (1.2x). The padding zeros meet every weight, so only finite weights take it, as
# the wide rows (inf * 0 is NaN; PyTorch's input gradient has no such product).


# Note [Channels-last convolution columns]
# When a window row is short (OW elements) but channels are many, the columns are cheaper taken channels
# last: over an (N, Hp, Wp, C) zero-padded copy of the input, the window view (N, OH, OW, kh, kw, C) has
# runs of kw*C contiguous elements (dilation 1), so its copy is (N*OH*OW, kh*kw*C) with long inner loops,
# and the forward is then ONE GEMM (N*OH*OW, kh*kw*C) @ (kh*kw*C, O) (or one per sample: Note [One GEMM or
# one per sample]). Its (N, OH, OW, O) result is copied into
# NCHW order; the weight gradient is one GEMM g (O, N*OH*OW) @ columns. Taken for groups == 1 when a
# kernel row of channels (kw*C) is at least `_CL_MIN_RUN` long (16: the cnn's second layer, kw*C = 24,
# gains in the weight gradient and breaks even in the forward); the first convolution of a model (C = 1)
# keeps the NCHW columns, whose rows are OW long.
_CL_MIN_RUN = 16


# Note [One GEMM or one per sample]
# A GEMM over the whole batch is ~1.5x faster than N per-sample ones when OpenBLAS runs one thread, but it is
# large enough for OpenBLAS to thread it (the per-sample ones are not), and on a shared machine its spinning
# threads made a demo step 4-6x slower (bench/bench_training.py with OPENBLAS_NUM_THREADS=2 under load). So
# the batch-wide forms are taken when OpenBLAS runs one thread (its environment variables, read once, or
# G.set_num_threads(1): Note [Thread count], runtime/threads.py) or the arrays are CuPy's; otherwise stacks
# of per-sample GEMMs.
def _batch_gemm(a: Any) -> bool:
    """Whether products over the batch of `a`'s kind are one GEMM: Note [One GEMM or one per sample]."""
    return one_blas_thread() or a.__class__ is not np.ndarray


def _channels_last(c: int, kw: int, groups: int) -> bool:
    return groups == 1 and kw * c >= _CL_MIN_RUN


def _columns_last(x: Any, kernel: Sequence[int], st: Sequence[int], pad: Sequence[int], dil: Sequence[int],
                  oh: int, ow: int) -> Any:
    """The (N*OH*OW, kh*kw*C) channels-last columns of x (N, C, H, W) in scratch slot COLS: Note
    [Channels-last convolution columns]. `x` may have any strides."""
    n, c, h, w = x.shape
    buf = _zeroed(PAD, (n, h + 2 * pad[0], w + 2 * pad[1], c), x.dtype, x)
    buf[:, pad[0]:pad[0] + h, pad[1]:pad[1] + w, :] = x.transpose(0, 2, 3, 1)
    sn, sh, sw, sc = buf.strides
    view = strided_view(buf, (n, oh, ow, kernel[0], kernel[1], c),
                        (sn, sh * st[0], sw * st[1], sh * dil[0], sw * dil[1], sc))
    return _scratch_copy(COLS, view).reshape(n * oh * ow, kernel[0] * kernel[1] * c)


def _weight_last(w: Any) -> Any:
    """The weight (O, C, kh, kw) as an (O, kh*kw*C) matrix (channels last, a copy)."""
    return copied(w.transpose(0, 2, 3, 1)).reshape(w.shape[0], -1)


def _nchw(m: Any, n: int, oh: int, ow: int) -> Any:
    """An (N*OH*OW, O) channels-last matrix as a new C-contiguous (N, O, OH, OW) array."""
    return copied(m.reshape(n, oh, ow, m.shape[-1]).transpose(0, 3, 1, 2))


def _grouped(m: Any, groups: int) -> Any:
    """(..., R, K) as (..., groups, R / groups, K) (a view)."""
    return m.reshape(*m.shape[:-2], groups, m.shape[-2] // groups, m.shape[-1])


def _times_weight(wm: Any, m: Any, groups: int) -> Any:
    """W (O, C*kh*kw) @ m[n] for each sample (m: (N, C*kh*kw, K)) -> (N, O, K), per group; m may also be one
    (C*kh*kw, K) matrix -> (O, K)."""
    if groups == 1:
        return wm @ m
    return (_grouped(wm, groups) @ _grouped(m, groups)).reshape(*m.shape[:-2], wm.shape[0], m.shape[-1])


def _times_weight_t(wm: Any, g: Any, groups: int) -> Any:
    """W^T @ g[n] for each sample (g: (N, O, K)) -> (N, C*kh*kw, K), per group."""
    if groups == 1:
        return wm.T @ g
    out = _grouped(wm, groups).transpose(0, 2, 1) @ _grouped(g, groups)
    return out.reshape(g.shape[0], groups * wm.shape[1], g.shape[-1])


def _outer_sum(g: Any, cols: Any, groups: int) -> Any:
    """The sum over n of g[n] (O, K) @ cols[n]^T (K, C*kh*kw) -> (O, C*kh*kw / groups), per group."""
    if groups == 1:
        return (g @ cols.transpose(0, 2, 1)).sum(0)
    gw = (_grouped(g, groups) @ _grouped(cols, groups).transpose(0, 1, 3, 2)).sum(0)
    return gw.reshape(g.shape[1], -1)


def _scalar_name(dt: dtypes.DType) -> str:
    """PyTorch's ScalarType name ("Float", "Long"): the legacy tensor type name less "Tensor"."""
    return dtypes.TENSOR_TYPE_NAMES[dt].removesuffix("Tensor")


def _check_forward(input: Tensor, weight: Tensor, bias: Tensor | None, groups: int) -> None:
    if input.dim() != 4 or weight.dim() != 4:
        raise RuntimeError(f"_conv2d_forward: expected a 4-D input and a 4-D weight, but got input of size "
                           f"{list(input.shape)} and weight of size {list(weight.shape)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    o, cg = weight.shape[:2]
    if cg * groups != input.shape[1] or o % groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {cg * groups} channels, but got {input.shape[1]} channels "
                           f"instead")
    if input._dtype is not weight._dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(input._dtype)} but found {_scalar_name(weight._dtype)}")
    if bias is not None:
        if bias._dtype is not input._dtype:
            raise RuntimeError(f"Input type ({input._dtype.name}) and bias type ({bias._dtype.name}) should be "
                               f"the same")
        if tuple(bias.shape) != (o,):
            raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
                               f"{o} elements, but got bias of size {list(bias.shape)} instead")


def _conv2d_forward(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Sequence[int],
                    padding: Sequence[int], dilation: Sequence[int], groups: int) -> Tensor:
    """The output (N, O, OH, OW) of a 2-D convolution of a 4-D input."""
    _check_forward(input, weight, bias, groups)
    st, pad, dil = _geometry(stride, padding, dilation)
    x = input._data
    out = _convolve(x, weight._data, st, pad, dil, groups)
    if bias is not None:
        out += bias._data.reshape(-1, 1, 1)
    return wrap(out, x, input._dtype)


def _convolve(x: Any, w: Any, st: Sequence[int], pad: Sequence[int], dil: Sequence[int], groups: int) -> Any:
    """The convolution of arrays x (N, C, H, W) and w (O, C / groups, kh, kw): a new C-contiguous (N, O, OH, OW)
    array (the caller has checked the arguments)."""
    n, c = x.shape[:2]
    o, _, kh, kw = w.shape
    oh, ow = out_size(x.shape, (kh, kw), dil, pad, st)
    if groups == c > 1 and w.shape[1] == 1 and x.size and w.size:  # Note [Compiled convolution and pooling kernels]
        out = conv_pool_cpp.depthwise_forward(x, w, st, pad, dil, oh, ow)
        if out is not None:
            return out
    wm = w.reshape(o, -1)
    layout = _cpp_layout(x, n, c * kh * kw // groups, ow, groups)
    batch = layout == "batch"
    if layout == "last" and w.size:
        cols = _batch_last_columns(x, (kh, kw), st, pad, dil, oh, ow)
        if cols is not None:  # Note [Compiled convolution and pooling kernels]: (O, OH*OW*N), then NCHW
            out = _product(wm, cols) if groups == 1 else _times_weight(wm, cols, groups)
            return _batch_first(out.reshape(o * oh * ow, n), (n, o, oh, ow))
    cols = _cpp_columns(x, (kh, kw), st, pad, dil, oh, ow, batch) if w.size else None
    if cols is not None:  # Note [Compiled convolution and pooling kernels]
        if batch:  # (O, N*L): one GEMM over the batch, then into NCHW order
            cols = cols.reshape(c * kh * kw, n * oh * ow)
            out = _product(wm, cols) if groups == 1 else _times_weight(wm, cols, groups)
            return copied(out.reshape(o, n, oh, ow).transpose(1, 0, 2, 3))
        return _times_weight(wm, cols, groups).reshape(n, o, oh, ow)
    wp = x.shape[3] + 2 * pad[1]
    # Wide rows save the copy's short inner loops (OW long) but pay for their junk columns in the GEMM and
    # in a cropping copy: taken for short rows (OW <= 16) with at most 1/8 of junk, before channels last
    # (whose runs, kw*C, are shorter than the wide rows' OH*Wp).
    if st == (1, 1) and ow <= 16 and 8 * (wp - ow) <= wp and x.size:  # Note [Convolution rows at padded width]
        if _batch_gemm(x):  # one GEMM over the batch (Note [One GEMM or one per sample])
            cols = _scratch_copy(COLS, _wide(x, (kh, kw), pad, dil, oh, channel_major=True))
            cols = cols.reshape(c * kh * kw, n * oh * wp)
            out = _product(wm, cols) if groups == 1 else _times_weight(wm, cols, groups)
            out = out.reshape(o, n, oh, wp)[..., :ow].transpose(1, 0, 2, 3)
        else:
            view = _wide(x, (kh, kw), pad, dil, oh)
            out = _times_weight(wm, _scratch_copy(COLS, view).reshape(n, c * kh * kw, oh * wp), groups)
            out = out.reshape(n, o, oh, wp)[..., :ow]
        return copied(out)
    if _channels_last(c, kw, groups) and x.size:  # Note [Channels-last convolution columns]
        cols = _columns_last(x, (kh, kw), st, pad, dil, oh, ow)
        wl = _weight_last(w).T
        return _nchw(_product(cols, wl) if _batch_gemm(x) else cols.reshape(n, oh * ow, -1) @ wl, n, oh, ow)
    cols = unfold_columns(x, (kh, kw), st, pad, dil, oh, ow, in_scratch=True)
    return _times_weight(wm, cols, groups).reshape(n, o, oh, ow)


# Note [Layouts of the compiled columns]
# With the C++ columns (Note [Compiled convolution and pooling kernels], conv_pool_cpp.py) each product takes
# one of three layouts. "sample": (N, C*kh*kw, L), a GEMM per sample whose (N, O, L) result is already in
# NCHW order; taken where BLAS may thread (Note [One GEMM or one per sample]) and where a group's
# C*kh*kw is below `_CPP_SAMPLE_K` (a model's first layer: the GEMMs are cheap, and the two transposing
# copies of the other layouts cost more than one GEMM saves: the demo's 1->16 layer 0.6x), without groups
# (N*groups GEMMs of a depthwise convolution cost 1.2x the channel-major layout's groups). "last":
# (C*kh*kw, OH*OW*N), one GEMM over the batch, for a batch larger than a row (N > OW): each window position
# is then one run of N elements (the demo's 16->32 layer at 6x6, whose rows are 6 long); the input and the
# output gradient are copied batch-last first and the result transposed back. "batch": (C*kh*kw, N, L), one
# GEMM, otherwise.
_CPP_SAMPLE_K = 32


def _cpp_layout(a: Any, n: int, k: int, ow: int, groups: int) -> str:
    """The C++ columns' layout for a convolution of batch n, a group's C*kh*kw = k and OW-long rows, on
    arrays like `a`: Note [Layouts of the compiled columns]."""
    if not _batch_gemm(a) or (k < _CPP_SAMPLE_K and groups == 1):
        return "sample"
    return "last" if n > ow else "batch"


def _cpp_columns(x: Any, kernel: Sequence[int], st: Sequence[int], pad: Sequence[int], dil: Sequence[int], oh: int,
                 ow: int, channel_major: bool) -> Any:
    """The columns of x made in C++ in scratch slot COLS, (N, C*kh*kw, L) or with `channel_major`
    (C*kh*kw, N, L); None where the C++ kernels cannot (Note [Compiled convolution and pooling kernels])."""
    return conv_pool_cpp.im2col(x, kernel, st, pad, dil, oh, ow, channel_major,
                                lambda shape: _scratch(COLS, shape, x.dtype, x))


def _batch_last_columns(x: Any, kernel: Sequence[int], st: Sequence[int], pad: Sequence[int], dil: Sequence[int],
                        oh: int, ow: int) -> Any:
    """The batch-last columns (C*kh*kw, OH*OW*N) of x (N, C, H, W) made in C++ in scratch slot COLS, from a
    (C, H, W, N) copy in slot PAD; None where the C++ kernels cannot."""
    if not conv_pool_cpp.ready(x) or not x.size:
        return None
    xt = _batch_last(x, PAD).reshape(*x.shape[1:], x.shape[0])
    return conv_pool_cpp.im2col_batch_last(xt, kernel, st, pad, dil, oh, ow,
                                           lambda shape: _scratch(COLS, shape, x.dtype, x))


def _batch_last(a: Any, slot: int) -> Any:
    """`a` (N, ...) as a C-contiguous (size / N, N) matrix, batch last, in scratch `slot` (a tiled C++
    transpose where `a` is C-contiguous)."""
    n = a.shape[0]
    out = _scratch(slot, (a.size // n, n), a.dtype, a)
    if not a.flags.c_contiguous or conv_pool_cpp.transpose(a.reshape(n, -1), out) is None:
        out.reshape(*a.shape[1:], n)[...] = a.transpose(*range(1, a.ndim), 0)
    return out


def _batch_first(m: Any, shape: Sequence[int]) -> Any:
    """A batch-last (size / N, N) matrix `m` (C-contiguous) as a new C-contiguous array of `shape` (N, ...)."""
    out = np.empty(tuple(shape), m.dtype) if m.__class__ is np.ndarray else None
    if out is None or conv_pool_cpp.transpose(m, out.reshape(shape[0], -1)) is None:
        return copied(m.reshape(*shape[1:], shape[0]).transpose(len(shape) - 1, *range(len(shape) - 1)))
    return out


def _grad_last(g: Any) -> Any:
    """The output gradient (N, O, OH, OW) as an (O, OH*OW*N) matrix (batch last), in scratch slot PAD."""
    return _batch_last(g, PAD).reshape(g.shape[1], -1)


def _grad_rows(g: Any) -> Any:
    """The output gradient (N, O, OH, OW) as an (O, N*OH*OW) matrix, in scratch slot PAD."""
    n, o, oh, ow = g.shape
    return _scratch_copy(PAD, g.transpose(1, 0, 2, 3)).reshape(o, n * oh * ow)


def _grad_matrices(grad_output: Tensor, wp: int | None = None) -> Any:
    """The output gradient (N, O, OH, OW) as N (O, OH*OW) matrices (a view); with `wp`, as rows of width wp
    padded with zeros, (O, OH*wp) (Note [Convolution rows at padded width]), in scratch slot PAD."""
    g = grad_output._data
    if g.ndim != 4:
        raise RuntimeError(f"convolution backward: expected a 4-D grad_output, but got {list(g.shape)}")
    n, o, oh, ow = g.shape
    if wp is None:
        return g.reshape(n, o, oh * ow)
    wide = _zeroed(PAD, (n, o, oh, wp), g.dtype, g)
    wide[..., :ow] = g
    return wide.reshape(n, o, oh * wp)


# Note [Input gradient by kernel rows]
# The stride-1 input gradient at padded width (Note [Convolution rows at padded width]) sums, into each plane,
# kh*kw products W[:, :, i, j]^T @ g shifted by i*dil*Wp + j*dil. The kw shifts of one kernel row are taken
# into the product instead: with g's rows at padded width, flattened over the batch, (O, N*OH*Wp), and its kw
# copies shifted right by j*dil stacked into an (O*kw, N*OH*Wp) matrix (each a contiguous run: a shift never
# leaves its row, as a row's last (kw - 1) * dil columns are the zero junk), ONE GEMM
# (kh*C, O*kw) @ (O*kw, N*OH*Wp) gives a kernel row's sum for every i, and the fold is kh adds of whole
# planes instead of kh*kw. Its product is kw times smaller and its K kw times larger than the per-tap GEMM's:
# the cnn's second layer's input gradient measured 0.74x the per-tap fold. Taken for groups == 1 with one
# GEMM over the batch (Note [One GEMM or one per sample]) and finite weights (the junk zeros meet them).
def _fold_rows(g: Any, w: Any, padded_size: Sequence[int], dil: Sequence[int]) -> Any:
    """The input gradient (N, C, Hp, Wp), padding included (a view of scratch slot COLS), of a stride-1
    convolution with weight w (O, C, kh, kw) from its output gradient g (N, O, OH, OW): Note [Input gradient
    by kernel rows]."""
    n, o, oh, ow = g.shape
    _, c, kh, kw = w.shape
    hp, wp = padded_size
    q = n * oh * wp
    lead = (kw - 1) * dil[1]
    buf = _zeroed(PAD, (o, lead + q), g.dtype, g)
    buf[:, lead:].reshape(o, n, oh, wp)[..., :ow] = g.transpose(1, 0, 2, 3)
    item = buf.itemsize
    # shifted[o, j', p] = g[o, p - (kw - 1 - j') * dil]: the shift by j*dil is row j' = kw - 1 - j, which
    # pairs with the weight's column j (the weight's columns are taken reversed).
    shifted = strided_view(buf, (o, kw, q), (buf.strides[0], dil[1] * item, item))
    rows = _product(copied(w[:, :, :, ::-1].transpose(2, 1, 0, 3)).reshape(kh * c, o * kw),
                    _scratch_copy(COLS, shifted).reshape(o * kw, q)).reshape(kh, c, n, oh * wp)
    flat = _zeroed(COLS, (c, n, hp * wp), g.dtype, g)
    for i in range(kh):
        start = i * dil[0] * wp
        flat[:, :, start:start + oh * wp] += rows[i]
    return flat.reshape(c, n, hp, wp).transpose(1, 0, 2, 3)


def _conv2d_backward_input(grad_output: Tensor, weight: Tensor, input_size: Sequence[int], stride: Sequence[int],
                           padding: Sequence[int], dilation: Sequence[int], groups: int) -> Tensor:
    """The gradient of a convolution's input (N, C, H, W): W^T @ g[n], folded back into the windows."""
    st, pad, dil = _geometry(stride, padding, dilation)
    n, c, h, w_ = (int(s) for s in input_size)
    wt = weight._data
    o, cg, kh, kw = wt.shape
    oh, ow = out_size((h, w_), (kh, kw), dil, pad, st)
    if tuple(grad_output.shape) != (n, o, oh, ow) or cg * groups != c:
        raise RuntimeError(f"convolution backward: grad_output of size {list(grad_output.shape)} does not match "
                           f"input size {[n, c, h, w_]} and weight of size {list(wt.shape)} (groups={groups})")
    wm = wt.reshape(o, -1)
    g = grad_output._data
    if groups == c > 1 and cg == 1 and o % c == 0 and g.size and wt.size:  # depthwise, directly in C++
        out = conv_pool_cpp.depthwise_backward_input(g, wt, (n, c, h, w_), st, pad, dil)
        if out is not None:
            return wrap(out, wt, weight._dtype)
    if g.size and wt.size and g.dtype == wt.dtype and conv_pool_cpp.can_add(wt):
        # Note [Compiled convolution and pooling kernels]: the column gradient, folded by col2im in C++
        layout = _cpp_layout(wt, n, cg * kh * kw, ow, groups)
        batch = layout == "batch"
        if layout == "last":  # (C*kh*kw, OH*OW*N), one GEMM, batch last
            rows = _grad_last(g)
            gcols = _product(wm.T, rows) if groups == 1 else _times_weight_t(wm, rows[None], groups)[0]
            dxt = _scratch(PAD, (c, h, w_, n), g.dtype, g)
            if conv_pool_cpp.col2im_batch_last(gcols, (n, c, h, w_), (kh, kw), st, pad, dil, oh, ow, dxt) is not None:
                return wrap(_batch_first(dxt.reshape(-1, n), (n, c, h, w_)), wt, weight._dtype)
        if batch:  # (C*kh*kw, N*L), one GEMM over the batch
            gcols = _times_weight_t(wm, _grad_rows(g)[None], groups)[0].reshape(-1, n, oh * ow)
        else:
            gcols = _times_weight_t(wm, g.reshape(n, o, oh * ow), groups)
        out = conv_pool_cpp.col2im(gcols, (n, c, h, w_), (kh, kw), st, pad, dil, oh, ow, batch)
        if out is not None:
            return wrap(out, wt, weight._dtype)
    xp = xp_of(wt)
    hp, wp = h + 2 * pad[0], w_ + 2 * pad[1]
    finite = st == (1, 1) and n and bool(xp.isfinite(wt).all())
    if (finite and groups == 1 and 8 * (wp - ow) > wp and pad[0] <= (kh - 1) * dil[0]
            and pad[1] <= (kw - 1) * dil[1]):  # Note [Input gradient as a convolution]
        flipped = copied(wt[:, :, ::-1, ::-1].transpose(1, 0, 2, 3))
        full = ((kh - 1) * dil[0] - pad[0], (kw - 1) * dil[1] - pad[1])
        return wrap(_convolve(grad_output._data, flipped, st, full, dil, 1), wt, weight._dtype)
    if finite and groups == 1 and _batch_gemm(wt):  # Note [Input gradient by kernel rows]
        out = _fold_rows(grad_output._data, wt, (hp, wp), dil)
    elif finite:  # Note [Convolution rows at padded width]
        gcols = _times_weight_t(wm, _grad_matrices(grad_output, wp), groups).reshape(n, c, kh, kw, oh * wp)
        taps = gcols.transpose(2, 3, 0, 1, 4)
        flat = _zeroed(PRODUCT, (n, c, hp * wp + (kw - 1) * dil[1]), gcols.dtype, gcols)
        for i in range(kh):
            for j in range(kw):
                start = i * dil[0] * wp + j * dil[1]
                flat[:, :, start:start + oh * wp] += taps[i, j]
        out = flat[:, :, :hp * wp].reshape(n, c, hp, wp)
    else:
        gcols = _times_weight_t(wm, _grad_matrices(grad_output), groups)
        out = xp.zeros((n, c, hp, wp), dtype=gcols.dtype)
        fold_add(out, gcols.reshape(n, c, kh, kw, oh, ow), (kh, kw), dil, st)
    if pad[0] or pad[1] or out.base is not None:
        out = copied(out[:, :, pad[0]:pad[0] + h, pad[1]:pad[1] + w_])
    return wrap(out, wt, weight._dtype)


def _conv2d_backward_weight(grad_output: Tensor, input: Tensor, weight_size: Sequence[int], stride: Sequence[int],
                            padding: Sequence[int], dilation: Sequence[int], groups: int) -> Tensor:
    """The gradient of a convolution's weight: the sum over n of g[n] @ cols[n]^T, with the columns made
    again from `input` (as PyTorch does: keeping the forward's alive until backward measured slower, the cnn
    step of bench/bench_training.py 1.63x PyTorch against 1.05x)."""
    st, pad, dil = _geometry(stride, padding, dilation)
    o, cg, kh, kw = (int(s) for s in weight_size)
    x = input._data
    if x.ndim != 4 or cg * groups != x.shape[1]:
        raise RuntimeError(f"convolution backward: input of size {list(x.shape)} does not match weight size "
                           f"{[o, cg, kh, kw]} (groups={groups})")
    n, c = x.shape[:2]
    oh, ow = out_size(x.shape, (kh, kw), dil, pad, st)
    if tuple(grad_output.shape) != (n, o, oh, ow):
        raise RuntimeError(f"convolution backward: grad_output of size {list(grad_output.shape)} does not match "
                           f"the output size {[n, o, oh, ow]}")
    g = grad_output._data
    if groups == c > 1 and cg == 1 and o % c == 0 and g.size and x.size and o:  # depthwise, directly in C++
        gw = conv_pool_cpp.depthwise_backward_weight(g, x, (kh, kw), st, pad, dil)
        if gw is not None:
            return wrap(gw, x, input._dtype)
    layout = _cpp_layout(x, n, cg * kh * kw, ow, groups)
    last, batch = layout == "last", layout != "sample"
    cols = None
    if o and g.dtype == x.dtype:
        if last:
            cols = _batch_last_columns(x, (kh, kw), st, pad, dil, oh, ow)
        else:
            cols = _cpp_columns(x, (kh, kw), st, pad, dil, oh, ow, batch)
    if cols is not None:  # Note [Compiled convolution and pooling kernels]
        if batch:  # g (O, N*L) @ columns^T (N*L, C*kh*kw): one GEMM over the batch
            rows = _grad_last(g) if last else _grad_rows(g)
            cols = cols.reshape(-1, n * oh * ow)
            if groups == 1:
                gw = rows @ cols.T
            else:
                gw = (_grouped(rows, groups) @ _grouped(cols, groups).transpose(0, 2, 1)).reshape(o, -1)
        else:
            gw = _outer_sum(g.reshape(n, o, oh * ow), cols, groups)
        return wrap(gw.reshape(o, cg, kh, kw), x, input._dtype)
    if _channels_last(c, kw, groups) and x.size:  # Note [Channels-last convolution columns]
        cols = _columns_last(x, (kh, kw), st, pad, dil, oh, ow)
        g = _grad_matrices(grad_output)
        if _batch_gemm(x):
            gw = _scratch_copy(PRODUCT, g.transpose(1, 0, 2)).reshape(o, n * oh * ow) @ cols
        else:
            gw = (g @ cols.reshape(n, oh * ow, -1)).sum(0)
        gw = copied(gw.reshape(o, kh, kw, c).transpose(0, 3, 1, 2))
        return wrap(gw, x, input._dtype)
    cols = unfold_columns(x, (kh, kw), st, pad, dil, oh, ow, in_scratch=True)
    gw = _outer_sum(_grad_matrices(grad_output), cols, groups)
    return wrap(gw.reshape(o, cg, kh, kw), x, input._dtype)
