"""Neural-network kernels (CompositeExplicitAutograd, NumPy or CuPy): softmax/log_softmax, cross entropy over
class indices, native_dropout, im2col/col2im (the unfold/fold behind conv2d and avg_pool2d) and
max_pool2d_with_indices. im2col, col2im and the max pool (and its backward) run the C++ kernels of
runtime/kernels/conv_pool_cpp.py once they are loaded, and NumPy otherwise."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import dtypes
from runtime import strides as S
from runtime.kernels import conv_ops, conv_pool_cpp
from runtime.kernels._xp import as_tuple, scatter_add_at, wrap, xp_of
from runtime.kernels.checks import check_weight_dtype
from runtime.random import _engine
from runtime.tensor import Tensor


def _softmax_dtype(self: Tensor, dtype: Any) -> dtypes.DType:
    dt = dtypes.as_dtype(dtype) if dtype is not None else self._dtype
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"softmax_lastdim_kernel_impl\" not implemented for '{dt.name}'")
    return dt


def _shifted(self: Tensor, dim: int, dt: dtypes.DType) -> tuple[Any, Any, int | None]:
    ct = np.float32 if dt is dtypes.float16 else dt.np
    a = self._data.astype(ct, copy=False)
    axis = None if a.ndim == 0 else S.wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        S.wrap_dim(dim, 0)
    if a.size == 0:
        return a, a, axis
    # As PyTorch, the row maximum is subtracted as it is: a row holding +inf gets inf - inf = nan (so
    # softmax([inf, 1]) is [nan, nan]) and an all -inf row gets nan too; the CUDA kernel
    # (runtime/cuda/include/opgen_softmax.cuh) computes the same.
    xp = xp_of(a)
    with np.errstate(invalid="ignore"):
        z = a - a.max(axis=axis, keepdims=True)
    if not z.flags.c_contiguous:  # PyTorch's softmax result is contiguous whatever the input's layout
        z = z.copy(order="C")
    return a, (z if z.ndim else xp.array(z)), axis  # a new array (0-d: not a NumPy scalar), written in place


def softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    dt = _softmax_dtype(self, dtype)
    a, z, axis = _shifted(self, dim, dt)
    xp = xp_of(a)
    if z is a:  # empty: nothing to compute, and `z` is the input's own array
        return wrap(a.copy(), a, dt)
    with np.errstate(all="ignore"):  # z is a new array: exponentiate and normalise it in place
        xp.exp(z, out=z)
        z /= z.sum(axis=axis, keepdims=True)
    return wrap(z, a, dt)


def log_softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    dt = _softmax_dtype(self, dtype)
    a, z, axis = _shifted(self, dim, dt)
    if z is a:
        return wrap(a.copy(), a, dt)
    _log_normalise(z, axis)
    return wrap(z, a, dt)


def _log_normalise(z: Any, axis: int | None) -> Any:
    """log_softmax of rows already shifted by their maximum, in place in `z` (one temporary, the
    exponentials)."""
    xp = xp_of(z)
    with np.errstate(all="ignore"):
        z -= xp.log(xp.exp(z).sum(axis=axis, keepdims=True))
    return z


def check_class_targets(targets: Any, classes: int) -> None:
    """PyTorch's IndexError for a class index outside [0, classes), naming the first such target."""
    bad = (targets < 0) | (targets >= classes)
    if bad.any():
        raise IndexError(f"Target {int(targets[bad].reshape(-1)[0])} is out of bounds.")


# Note [Cross entropy as one node]
# F.cross_entropy with class-index targets (and no label smoothing) is one op, `_cross_entropy_indices`,
# with one backward node, where the composite log_softmax -> gather -> squeeze -> neg -> mean records five
# and checks the targets in each. Forward: log_softmax of the logits (the row maximum subtracted, as
# `log_softmax`), the log-probability at each target, times its class weight (0 where the target is
# `ignore_index`), reduced. Backward: d loss / d logits[n, c] = coef[n] * w[n] * (softmax[n, c] - [c == t[n]]),
# with coef the incoming gradient (divided by the total weight for "mean"); the softmax is recomputed
# from the logits (`cross_entropy_indices_parts`), so the node saves no probabilities. A double backward
# (create_graph) writes the same formula with ops (runtime/autograd/formulas.py). The composite
# (runtime/kernels/composite_ops.py) still serves probability targets, label smoothing, and a weight
# that requires grad.
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum", "none": "none", "mean": "mean", "sum": "sum",
               "elementwise_mean": "mean"}


def reduction_name(reduction: Any) -> str:
    """"none", "mean" or "sum" for a loss's `reduction`: PyTorch's number (0, 1, 2) or the name F.* take."""
    try:
        return _REDUCTIONS[reduction]
    except (KeyError, TypeError):
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


def _class_targets(self: Tensor, target: Tensor, weight: Tensor | None) -> tuple[Any, int]:
    """The targets with a leading batch dim added for a single sample, and the number of classes; PyTorch's
    errors for a target or weight that does not fit the logits `self`."""
    if self.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {self.dim()})")
    if target._dtype is not dtypes.int64:
        raise RuntimeError(f"expected scalar type Long but found {target._dtype.name}")
    shape = self._data.shape
    single = len(shape) == 1
    t = target._data[None] if single and target._data.ndim == 0 else target._data
    n = 1 if single else shape[0]
    if t.ndim == 0 or t.shape[0] != n:
        raise ValueError(f"Expected input batch_size ({n}) to match target batch_size "
                         f"({t.shape[0] if t.ndim else 0}).")
    expected = (1,) if single else shape[:1] + shape[2:]
    if t.shape != expected:
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(t.shape)}")
    classes = shape[0] if single else shape[1]
    if weight is not None and (weight.dim() != 1 or weight._data.shape[0] != classes):
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes but "
                           f"got weight tensor of shape: {list(weight.shape)}")
    return t, classes


def _target_weights(t: Any, classes: int, weight: Tensor | None, ignore_index: int, dtype: Any,
                    check: bool) -> tuple[Any, Any, Any]:
    """(targets with ignored ones replaced by class 0, the weight of each target or None when all are 1, the
    mask of targets not ignored or None when none is); with `check`, PyTorch's IndexError for a target out
    of range that is not `ignore_index`."""
    xp = xp_of(t)
    # one reduction for both bounds: a negative int64 read as uint64 is above any class count
    in_range = t.size == 0 or int(t.view(xp.uint64).max()) < classes
    if in_range and not 0 <= ignore_index < classes:
        valid = None  # nothing can equal ignore_index
    else:
        valid = t != ignore_index
        if valid.all():
            valid = None
    if check and not in_range:
        check_class_targets(t if valid is None else t[valid], classes)
    safe = t if valid is None else xp.where(valid, t, 0)
    w = None
    if weight is not None:
        w = weight._data.astype(dtype, copy=False)[safe]
        if valid is not None:
            w = xp.where(valid, w, 0)
    elif valid is not None:
        w = valid.astype(dtype)
    return safe, w, valid


def _pick(a: Any, safe: Any) -> Any:
    """a[n, safe[n], ...]: the entry of each sample's target class (class dim 1)."""
    xp = xp_of(a)
    if a.ndim == 2:
        return a[xp.arange(a.shape[0]), safe]
    return xp.take_along_axis(a, safe[:, None], axis=1)[:, 0]


def cross_entropy_indices(self: Tensor, target: Tensor, weight: Tensor | None = None, reduction: Any = 1,
                          ignore_index: int = -100) -> Tensor:
    """Cross entropy of logits `self` (classes in dim 1, or dim 0 for one sample) against class indices
    (Note [Cross entropy as one node])."""
    check_weight_dtype(self, weight)
    t, classes = _class_targets(self, target, weight)
    r = reduction_name(reduction)
    dt = _softmax_dtype(self, None)
    a, z, axis = _shifted(self, 1 if self._data.ndim > 1 else 0, dt)
    logp = _log_normalise(z.copy() if z is a else z, axis)
    if self._data.ndim == 1:
        logp = logp[None]
    safe, w, _ = _target_weights(t, classes, weight, ignore_index, logp.dtype, True)
    loss = _pick(logp, safe)
    loss = -loss if w is None else -(loss * w)
    if r == "none":
        return wrap(loss[0] if self._data.ndim == 1 else loss, logp, dt)
    total = loss.sum()
    if r == "mean":
        if w is None and loss.size:
            total = total / logp.dtype.type(loss.size)
        else:
            with np.errstate(all="ignore"):  # every target ignored (or none): 0 / 0 = nan, as PyTorch
                total = total / (w.sum() if w is not None else logp.dtype.type(0))
    return wrap(total, logp, dt)


def cross_entropy_indices_backward(grad: Tensor, self: Tensor, target: Tensor, weight: Tensor | None,
                                   reduction: Any, ignore_index: int) -> Tensor:
    """d cross_entropy_indices / d self on the arrays (Note [Cross entropy as one node]); the forward has
    checked the arguments."""
    single = self._data.ndim == 1
    t = target._data[None] if single and target._data.ndim == 0 else target._data
    a, p, _ = _shifted(self, 0 if single else 1, _softmax_dtype(self, None))
    if p is a:  # no elements: `_shifted` returned the input's own array
        p = a.copy()
    if single:
        p = p[None]
    xp = xp_of(p)
    with np.errstate(all="ignore"):
        xp.exp(p, out=p)
        p /= p.sum(axis=1, keepdims=True)  # the softmax
        safe, w, valid = _target_weights(t, p.shape[1], weight, ignore_index, p.dtype, False)
        if p.ndim == 2:
            p[xp.arange(p.shape[0]), safe] -= 1  # minus the one-hot targets
        else:
            p -= xp.arange(p.shape[1]).reshape((-1,) + (1,) * (p.ndim - 2)) == safe[:, None]
        g = grad._data.astype(p.dtype, copy=False)
        r = reduction_name(reduction)
        if r == "mean":
            g = g / (w.sum() if w is not None else p.dtype.type(safe.size))
        coef = g if w is None else w * g
        if valid is not None:
            coef = xp.where(valid, coef, 0)  # an ignored target adds nothing, even when the mean divides by 0
        if r == "none" and single:
            coef = coef.reshape(1)
        p *= coef[:, None] if getattr(coef, "ndim", 0) else coef
    return wrap(p[0] if single else p, a, self._dtype)


def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    """Zero each element with probability p and scale the rest by 1/(1-p); returns (output, keep mask)."""
    a = input._data
    xp = xp_of(a)
    if train is False:
        return wrap(a.copy(), a, input._dtype), wrap(xp.ones(a.shape, dtype=bool), a, dtypes.bool_)
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    engine = _engine(input, None)
    keep = engine.random(a.shape) >= p if a.size else xp.zeros(a.shape, dtype=bool)
    keep = xp.asarray(keep)
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    out = a * keep * a.dtype.type(scale) if a.dtype.kind == "f" else a * keep
    return wrap(out, a, input._dtype), wrap(keep, a, dtypes.bool_)


def im2col(self: Tensor, kernel_size: Sequence[int], dilation: Sequence[int], padding: Sequence[int],
           stride: Sequence[int]) -> Tensor:
    """(N, C, H, W) -> (N, C*kh*kw, L): every kernel window as a column (PyTorch's unfold); one copy of a
    strided window view."""
    k, dil, pad, st = (as_tuple(v, 2) for v in (kernel_size, dilation, padding, stride))
    a = self._data
    if a.ndim not in (3, 4):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor for input with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(a.shape)}")
    x = a if a.ndim == 4 else a[None]
    oh, ow = conv_ops.out_size(x.shape, k, dil, pad, st)
    cols = conv_ops.unfold_columns(x, k, st, pad, dil, oh, ow)
    return wrap(cols if a.ndim == 4 else cols[0], a, self._dtype)


def col2im(self: Tensor, output_size: Sequence[int], kernel_size: Sequence[int], dilation: Sequence[int],
           padding: Sequence[int], stride: Sequence[int]) -> Tensor:
    """(N, C*kh*kw, L) -> (N, C, H, W): columns summed back into their windows (PyTorch's fold)."""
    size, k, dil, pad, st = (as_tuple(v, 2) for v in (output_size, kernel_size, dilation, padding, stride))
    a = self._data
    batched = a.ndim == 3
    cols = a if batched else a[None]
    xp = xp_of(cols)
    n, ckk, length = cols.shape
    if ckk % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                           f"but got input.size(1)={ckk} and kernel_size={k}")
    c = ckk // (k[0] * k[1])
    oh, ow = conv_ops.out_size(size, k, dil, pad, st)
    if oh * ow != length:
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={dil}, padding={pad}, stride={st}, "
                           f"expected size of input's dimension 2 to match the calculated number of sliding blocks "
                           f"{oh} * {ow} = {oh * ow}, but got input.size(2)={length}.")
    folded = conv_pool_cpp.col2im(cols, (n, c, *size), k, st, pad, dil, oh, ow, False) if ckk else None
    if folded is not None:  # Note [Compiled convolution and pooling kernels]
        return wrap(folded if batched else folded[0], a, self._dtype)
    out = xp.zeros((n, c, size[0] + 2 * pad[0], size[1] + 2 * pad[1]), dtype=cols.dtype)
    conv_ops.fold_add(out, cols.reshape(n, c, k[0], k[1], oh, ow), k, dil, st)
    out = out[:, :, pad[0]:pad[0] + size[0], pad[1]:pad[1] + size[1]]
    return wrap(out if batched else out[0], a, self._dtype)


def pool_output_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling_output_shape: with ceil_mode, a last window must start inside the input or left pad."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pool_args(self: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
               ceil_mode: bool) -> tuple[Any, ...]:
    k = as_tuple(kernel_size, 2)
    st = as_tuple(stride, 2) if stride is not None and len(stride if not isinstance(stride, int) else [1]) else k
    pad, dil = as_tuple(padding, 2), as_tuple(dilation, 2)
    # PyTorch's checks, in its order (a kernel of 0 is also a stride of 0 when the stride defaults to it)
    if 0 in st:
        raise RuntimeError("stride should not be zero")
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}")
    if min(st) < 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {st[0]} dW: {st[1]}")
    if min(dil) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dil[0]} dilationW: {dil[1]}")
    if min(pad) < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(pad)}")
    if self.dim() not in (3, 4):
        raise RuntimeError(f"non-empty 3D or 4D (batch mode) tensor expected for input, but got {list(self.shape)}")
    if pad[0] > k[0] // 2 or pad[1] > k[1] // 2:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pad[0]}, "
                           f"kernel_size={k[0]} and dilation={dil[0]}")
    h, w = self.shape[-2:]
    oh = pool_output_size(h, k[0], st[0], pad[0], dil[0], ceil_mode)
    ow = pool_output_size(w, k[1], st[1], pad[1], dil[1], ceil_mode)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"Given input size: ({h}x{w}). Calculated output size: ({oh}x{ow}). Output size is too "
                           f"small")
    return k, st, pad, dil, oh, ow


def max_pool2d_with_indices(self: Tensor, kernel_size: Sequence[int], stride: Sequence[int] = (),
                            padding: Sequence[int] = 0, dilation: Sequence[int] = 1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """Max over each window; indices are flat positions h * W + w in the (unpadded) input plane."""
    k, st, pad, dil, oh, ow = _pool_args(self, kernel_size, stride, padding, dilation, ceil_mode)
    a = self._data
    compiled = conv_pool_cpp.max_pool(a, k, st, pad, dil, oh, ow)
    if compiled is not None:  # Note [Compiled convolution and pooling kernels]
        return wrap(compiled[0], a, self._dtype), wrap(compiled[1], a, dtypes.int64)
    xp = xp_of(a)
    h, w = a.shape[-2:]
    if st == k and dil == (1, 1) and pad == (0, 0) and oh * k[0] <= h and ow * k[1] <= w and a.size:
        tiled = _max_pool_tiled(a, k, oh, ow)
        if tiled is not None:
            return wrap(tiled[0], a, self._dtype), wrap(tiled[1], a, dtypes.int64)
    floating = a.dtype.kind == "f"
    low = -np.inf if floating else np.iinfo(a.dtype).min
    need_h = (oh - 1) * st[0] + dil[0] * (k[0] - 1) + 1
    need_w = (ow - 1) * st[1] + dil[1] * (k[1] - 1) + 1
    extra_h, extra_w = max(0, need_h - h - 2 * pad[0]), max(0, need_w - w - 2 * pad[1])
    widths = [(0, 0)] * (a.ndim - 2) + [(pad[0], pad[0] + extra_h), (pad[1], pad[1] + extra_w)]
    edged = any(p for pair in widths for p in pair)
    x = xp.pad(a, widths, constant_values=low) if edged else a
    # One strided view per window position (no copy): the max is a running np.maximum (NaN wins, as in
    # PyTorch); the window position r of the max is the first whose value equals it, found by a backward
    # sweep. Positions in the padding never count (a window of -inf values points at its first input
    # element, as PyTorch's), and a NaN counts as equal to the NaN it made.
    views = [x[..., h0:h0 + st[0] * (oh - 1) + 1:st[0], w0:w0 + st[1] * (ow - 1) + 1:st[1]]
             for h0 in range(0, dil[0] * k[0], dil[0]) for w0 in range(0, dil[1] * k[1], dil[1])]
    best = views[0].copy()
    for v in views[1:]:
        xp.maximum(best, v, out=best)
    rows = xp.arange(oh).reshape(oh, 1) * st[0] - pad[0]
    cols = xp.arange(ow) * st[1] - pad[1]
    nan = floating and bool(xp.isnan(best).any())
    last = len(views) - 1
    r = xp.full(best.shape, last, dtype=np.int16 if last > 127 else np.int8)
    for pos in range(last - (0 if edged else 1), -1, -1):
        v = views[pos]
        hit = v == best
        if edged:
            i, j = divmod(pos, k[1])
            y, z = rows + i * dil[0], cols + j * dil[1]
            hit &= ((y >= 0) & (y < h)) & ((z >= 0) & (z < w))
        xp.copyto(r, pos, where=hit)
    if nan:  # a NaN wins its window, the last NaN of it as in PyTorch (the padding holds none)
        for pos, v in enumerate(views):
            xp.copyto(r, pos, where=v != v)
    offsets = xp.asarray([i * dil[0] * w + j * dil[1] for i in range(k[0]) for j in range(k[1])], dtype=np.int64)
    flat = offsets.take(r)
    flat += rows * w + cols
    return wrap(best, a, self._dtype), wrap(flat, a, dtypes.int64)


def _first_max(views: list[Any]) -> tuple[Any, Any]:
    """(max, position of its first occurrence) over equally shaped arrays; NaN is ignored (the caller checks)."""
    xp = xp_of(views[0])
    if len(views) == 2:
        at = views[1] > views[0]
        return xp.maximum(views[0], views[1]), at.view(np.int8) if isinstance(at, np.ndarray) else at.astype(np.int8)
    best = views[0].copy()
    at = xp.zeros(best.shape, dtype=np.int16 if len(views) > 127 else np.int8)
    for pos in range(1, len(views)):
        higher = views[pos] > best
        xp.copyto(best, views[pos], where=higher)
        xp.copyto(at, pos, where=higher)
    return best, at


def _max_pool_tiled(a: Any, k: Sequence[int], oh: int, ow: int) -> tuple[Any, Any] | None:
    """max_pool2d_with_indices where the windows tile the plane (stride = kernel, no padding or dilation), in
    two separable steps: the max over each row of a window (strided views along W), then over those row maxima
    (whole rows along H). Ties go to the first position, as PyTorch's. None when a NaN is in the result
    (the general sweep then picks the NaN's position)."""
    xp = xp_of(a)
    w = a.shape[-1]
    x = a[..., :oh * k[0], :ow * k[1]]
    row_max, col = _first_max([x[..., j::k[1]] for j in range(k[1])])          # (..., OH*kh, OW)
    row_max = row_max.reshape(*row_max.shape[:-2], oh, k[0], ow)
    best, row = _first_max([row_max[..., i, :] for i in range(k[0])])          # (..., OH, OW)
    if best.dtype.kind == "f" and bool(xp.isnan(best).any()):
        return None
    col = col.reshape(row_max.shape)
    # The flat index is the window's corner plus the offset of position r = i * kw + j in it: r is computed in
    # small ints (same-type ufuncs), then looked up in the (kh*kw,) offset table: int64 only in the last pass.
    corner = xp.arange(0, oh * k[0] * w, k[0] * w).reshape(oh, 1) + xp.arange(0, ow * k[1], k[1])  # (OH, OW)
    offsets = xp.asarray([i * w + j for i in range(k[0]) for j in range(k[1])], dtype=np.int64)
    if k[0] == 1:
        r = col[..., 0, :]
    elif k[0] == 2 and k[1] < 64:  # row is 0/1: r = kw + j1 in the second row, else j0
        r = col[..., 1, :] - col[..., 0, :]
        r += k[1]
        r *= row
        r += col[..., 0, :]
    else:
        picked = xp.take_along_axis(col, row[..., None, :].astype(np.int64), axis=-2)[..., 0, :]
        r = row.astype(np.int64) * k[1] + picked
    flat = offsets.take(r)
    flat += corner
    return best, flat


def max_pool2d_with_indices_backward(grad_output: Tensor, self: Tensor, kernel_size: Sequence[int],
                                     stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
                                     ceil_mode: bool, indices: Tensor) -> Tensor:
    """The gradient of max_pool2d: each output's gradient added at the input position its max came from
    (`indices`, flat in each plane). Windows that cannot overlap write each position at most once (an
    assignment); overlapping ones accumulate (np.bincount, one pass, or scatter-add)."""
    k, st, _, dil, oh, ow = _pool_args(self, kernel_size, stride, padding, dilation, ceil_mode)
    g, idx = grad_output._data, indices._data
    if tuple(g.shape) != (*self.shape[:-2], oh, ow) or tuple(idx.shape) != tuple(g.shape):
        raise RuntimeError(f"max_pool2d_with_indices_backward: expected grad_output and indices of size "
                           f"{[*self.shape[:-2], oh, ow]}, but got {list(g.shape)} and {list(idx.shape)}")
    xp = xp_of(g)
    h, w = self.shape[-2:]
    planes = g.size // (oh * ow) if g.size else 0
    compiled = conv_pool_cpp.max_pool_backward(g, idx, planes, h * w) if planes else None
    if compiled is not None:  # Note [Compiled convolution and pooling kernels]
        return wrap(compiled.reshape(self.shape), g, grad_output._dtype)
    flat = idx.reshape(planes, oh * ow) + xp.arange(0, planes * h * w, h * w).reshape(planes, 1)
    dt = g.dtype
    if st[0] >= dil[0] * (k[0] - 1) + 1 and st[1] >= dil[1] * (k[1] - 1) + 1:
        out = xp.zeros(planes * h * w, dtype=dt)
        out[flat.reshape(-1)] = g.reshape(-1)
    elif g.__class__ is np.ndarray and dt.kind == "f":
        out = np.bincount(flat.reshape(-1), weights=g.reshape(-1), minlength=planes * h * w).astype(dt)
    else:
        out = xp.zeros(planes * h * w, dtype=dt)
        scatter_add_at(xp, out, (flat.reshape(-1),), g.reshape(-1))
    return wrap(out.reshape(self.shape), g, grad_output._dtype)


def avg_pool_divisors(h: int, w: int, k: Sequence[int], st: Sequence[int], pad: Sequence[int], oh: int, ow: int,
                      count_include_pad: bool) -> Any:
    """The divisor of each output of avg_pool2d (PyTorch's rule: windows clipped to input + padding, and to
    the input itself when padding is not counted)."""
    def extent(size: int, kernel: int, step: int, p: int, n: int) -> Any:  # the window sizes along one dim
        start = np.arange(n) * step - p
        end = np.minimum(start + kernel, size + p)
        return end - start if count_include_pad else np.minimum(end, size) - np.maximum(start, 0)

    return np.outer(extent(h, k[0], st[0], pad[0], oh), extent(w, k[1], st[1], pad[1], ow)).astype(np.float64)


def pool_geometry(self: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool) -> Any:
    return _pool_args(self, kernel_size, stride, padding, dilation, ceil_mode)
