"""CompositeImplicitAutograd ops built from other ops (autograd for free): norms, outer,
stack/chunk/flatten/tile, argsort, dropout, the losses and the pooling/convolution wrappers."""

from __future__ import annotations

from typing import Any

from runtime import linalg, opcall
from runtime.kernels import nn_ops
from runtime.kernels._xp import as_tuple
from runtime.kernels.checks import check_weight_dtype


def _G() -> Any:
    return opcall.api


def norm(self: Any, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    """`torch.norm`: the vector p-norm over `dim` (all elements by default); `fro` is the 2-norm, `nuc` the
    nuclear norm of the matrices over two dims."""
    G = _G()
    if isinstance(dim, int):
        dim = [dim]
    if p == "nuc":
        return linalg.matrix_norm(self, "nuc", [-2, -1] if dim is None else dim, keepdim, dtype=dtype)
    if isinstance(p, str) and p != "fro":
        raise RuntimeError(f"norm(): unknown norm type {p!r} (expected a number, 'fro' or 'nuc')")
    return G.linalg_vector_norm(self, 2 if p is None or p == "fro" else p, dim, keepdim, dtype=dtype)


# -- linear algebra ---------------------------------------------------------------------------------

def det(self: Any) -> Any:
    """`det` / `Tensor.det`: `G.linalg.det` (whose Python function takes out=, so it can't be the kernel)."""
    return linalg.det(self)


def linalg_svdvals(A: Any, driver: str | None = None) -> Any:
    """The op `linalg_svdvals`: `G.linalg.svdvals`."""
    return linalg.svdvals(A, driver)


def linalg_matrix_norm(self: Any, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False,
                       dtype: Any = None) -> Any:
    """The op `linalg_matrix_norm` (both overloads): `G.linalg.matrix_norm`."""
    return linalg.matrix_norm(self, ord, dim, keepdim, dtype)


def linalg_pinv(A: Any, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Any:
    """The op `_linalg_pinv`: the value of `G.linalg.pinv`, computed outside autograd (its gradient is
    derivatives.yaml's)."""
    with _G().no_grad():
        return linalg.pinv_value(A, atol, rtol, hermitian)


def outer(self: Any, vec2: Any) -> Any:
    if self.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"outer: expected 1D tensors, but got {self.dim()}D and {vec2.dim()}D")
    return _G().reshape(self, (-1, 1)) * vec2


# -- losses -----------------------------------------------------------------------------------------
_reduction = nn_ops.reduction_name


def _reduce(loss: Any, reduction: Any) -> Any:
    r = _reduction(reduction)
    if r == "none":
        return loss
    return _G().sum(loss) if r == "sum" else _G().mean(loss)


def mse_loss(self: Any, target: Any, reduction: Any = "mean") -> Any:
    d = self - target
    return _reduce(d * d, reduction)


def l1_loss(self: Any, target: Any, reduction: Any = "mean") -> Any:
    return _reduce(_G().abs(self - target), reduction)


def smooth_l1_loss(self: Any, target: Any, reduction: Any = "mean", beta: float = 1.0) -> Any:
    G = _G()
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    z = G.abs(self - target)
    if beta == 0:
        return _reduce(z, reduction)
    return _reduce(G.where(z < beta, z * z * (0.5 / beta), z - 0.5 * beta), reduction)


def huber_loss(self: Any, target: Any, reduction: Any = "mean", delta: float = 1.0) -> Any:
    """0.5 z^2 where z = |x - t| < delta, else delta (z - 0.5 delta)."""
    G = _G()
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    z = G.abs(self - target)
    return _reduce(G.where(z < delta, z * z * 0.5, (z - 0.5 * delta) * delta), reduction)


def kl_div(self: Any, target: Any, reduction: Any = "mean", log_target: bool = False) -> Any:
    """target * (log target - input) pointwise (0 where target is 0); `input` holds log-probabilities."""
    G = _G()
    if not (self.dtype.is_floating_point and target.dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = G.exp(target) * (target - self)
    else:
        # target * log(target) is 0 where target is 0 (the log never sees a 0, so neither does its gradient)
        # and NaN where target < 0, as PyTorch's xlogy(target, target) - target * input
        zero = target == 0
        loss = G.where(zero, 0 * target, target * G.log(G.where(zero, 1, target))) - target * self
    if reduction == "batchmean":
        return G.sum(loss) / (self.shape[0] if self.dim() else 1)
    return _reduce(loss, reduction)


def binary_cross_entropy(self: Any, target: Any, weight: Any = None, reduction: Any = "mean") -> Any:
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as PyTorch."""
    G = _G()
    if self.shape != target.shape:
        raise ValueError(f"Using a target size ({list(target.shape)}) that is different to the input size "
                         f"({list(self.shape)}) is deprecated. Please ensure they have the same size.")
    log_x = G.clamp(G.log(self), -100)
    log_1mx = G.clamp(G.log(1 - self), -100)
    loss = -(log_x * target + log_1mx * (1 - target))  # laid out as `self`, as PyTorch's
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(self: Any, target: Any, weight: Any = None, pos_weight: Any = None,
                                     reduction: Any = "mean") -> Any:
    """(1 - t) x - w_pos(t) log(sigmoid(x)), with w_pos(t) = (pos_weight - 1) t + 1."""
    G = _G()
    if self.shape != target.shape:
        raise ValueError(f"Target size ({list(target.shape)}) must be the same as input size ({list(self.shape)})")
    log_sig = G.log_sigmoid(self)
    if pos_weight is not None:
        loss = (1 - target) * self - ((pos_weight - 1) * target + 1) * log_sig
    else:
        loss = (1 - target) * self - log_sig
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def nll_loss(self: Any, target: Any, weight: Any = None, reduction: Any = "mean", ignore_index: int = -100) -> Any:
    """-w[t] x[n, t] per sample (class dim 1, or 0 for one sample); mean divides by the total weight."""
    G = _G()
    if self.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {self.dim()})")
    if target.dtype not in (G.int64, G.int32, G.uint8, G.int16, G.int8):
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.name}")
    check_weight_dtype(self, weight)
    x, t = (G.unsqueeze(self, 0), G.unsqueeze(target, 0)) if self.dim() == 1 else (self, target)
    if x.shape[0] != t.shape[0]:
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size ({t.shape[0]}).")
    r = _reduction(reduction)
    if weight is None and t.dtype is G.int64 and t.device.type == "cpu" and not (t._data == ignore_index).any():
        # Every target counts with weight 1 (the common case): the loss is the picked values, and the
        # mean divides by their number; no mask, no weights, fewer ops to record
        nn_ops.check_class_targets(t._data, x.shape[1] if x.dim() > 1 else 0)
        loss = -G.squeeze(G.gather(x, 1, G.unsqueeze(t, 1)), 1)
        if self.dim() == 1:
            loss = G.squeeze(loss, 0)
        if r == "none":
            return loss
        return G.sum(loss) if r == "sum" else G.mean(loss)
    valid = t != ignore_index
    classes = x.shape[1] if x.dim() > 1 else 0
    if t.device.type != "meta":  # a meta target has no values to check (Note [Meta tensors])
        nn_ops.check_class_targets(t._data[valid._data], classes)
    safe = G.where(valid, t, 0).to(G.int64)
    picked = G.squeeze(G.gather(x, 1, G.unsqueeze(safe, 1)), 1)
    if weight is not None:
        w = G.reshape(G.index_select(weight, 0, G.reshape(safe, (-1,))), safe.shape)
        w = G.where(valid, w, 0)
    else:
        w = valid.to(x.dtype)
    loss = -(picked * w)
    if self.dim() == 1:
        loss, w = G.squeeze(loss, 0), G.squeeze(w, 0)
    if r == "none":
        return loss
    if r == "sum":
        return G.sum(loss)
    return G.sum(loss) / G.sum(w)


def cross_entropy_loss(self: Any, target: Any, weight: Any = None, reduction: Any = "mean",
                       ignore_index: int = -100, label_smoothing: float = 0.0) -> Any:
    """log_softmax over the class dim, then nll_loss (class indices) or -sum(p log q) (probabilities)."""
    G = _G()
    if (not target.dtype.is_floating_point and label_smoothing <= 0 and target.dtype is G.int64
            and (weight is None or not weight.requires_grad)):  # Note [Cross entropy as one node]
        return G._cross_entropy_indices(self, target, weight, reduction, ignore_index)
    cdim = 0 if self.dim() == 1 else 1
    logp = G.log_softmax(self, cdim)
    n_classes = self.shape[cdim]
    wshape = [1] * self.dim()
    if weight is not None:
        wshape[cdim] = n_classes
    if target.dtype.is_floating_point:
        if target.shape != self.shape:
            raise RuntimeError("Expected target size to match input size for class probabilities")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        terms = logp * target if weight is None else logp * target * G.reshape(weight, wshape)
        loss = -G.sum(terms, [cdim])
        r = _reduction(reduction)
        if r == "none":
            return loss
        if r == "sum":
            return G.sum(loss)
        return G.sum(loss) / max(loss.numel(), 1) if loss.dim() else loss
    nll = nll_loss(logp, target, weight, reduction, ignore_index)
    if label_smoothing <= 0:
        return nll
    valid = target != ignore_index
    terms = logp if weight is None else logp * G.reshape(weight, wshape)
    smooth = G.where(valid, -G.sum(terms, [cdim]), 0)
    r = _reduction(reduction)
    if r == "sum":
        smooth = G.sum(smooth)
    elif r == "mean":
        if weight is None:
            smooth = G.sum(smooth) / G.sum(valid)
        else:
            safe = G.where(valid, target, 0).to(G.int64)
            w = G.where(valid, G.reshape(G.index_select(weight, 0, G.reshape(safe, (-1,))), safe.shape), 0)
            smooth = G.sum(smooth) / G.sum(w)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / n_classes)


# -- dropout, convolution, pooling ------------------------------------------------------------------

def dropout(input: Any, p: float, train: bool) -> Any:
    """Zero elements with probability p (train only) and scale the rest by 1/(1-p)."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0 or input.numel() == 0:
        return input
    return _G().native_dropout(input, p, train)[0]


def conv2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
           groups: int = 1) -> Any:
    """2-D convolution: _conv2d_forward (columns + GEMM, runtime/kernels/conv_ops.py) on a 4-D input; the
    weight gradient makes its columns again (runtime/kernels/conv_ops.py)."""
    G = _G()
    if input.dim() not in (3, 4) or weight.dim() != 4:
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
                           f"{list(input.shape)}")
    x = input if input.dim() == 4 else G.unsqueeze(input, 0)
    out = G._conv2d_forward(x, weight, bias, as_tuple(stride, 2), as_tuple(padding, 2), as_tuple(dilation, 2),
                            groups)
    return out if input.dim() == 4 else G.squeeze(out, 0)


def max_pool2d(self: Any, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False) -> Any:
    return _G().max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]


def avg_pool2d(self: Any, kernel_size: Any, stride: Any = (), padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Any:
    """Window sums (im2col over each plane) divided by PyTorch's divisor for each window."""
    G = _G()
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("avg_pool2d: divisor_override must not be zero")
    k, st, pad, _, oh, ow = nn_ops.pool_geometry(self, kernel_size, stride, padding, 1, ceil_mode)
    shape = self.shape
    h, w = shape[-2:]
    planes = G.reshape(self, (-1, 1, h, w))
    need_h, need_w = (oh - 1) * st[0] + k[0], (ow - 1) * st[1] + k[1]
    extra_h, extra_w = max(0, need_h - h - 2 * pad[0]), max(0, need_w - w - 2 * pad[1])
    if extra_h:
        planes = G.cat([planes, G.zeros((planes.shape[0], 1, extra_h, w), dtype=self.dtype, device=self.device)], 2)
    if extra_w:
        planes = G.cat([planes, G.zeros((planes.shape[0], 1, planes.shape[2], extra_w), dtype=self.dtype,
                                        device=self.device)], 3)
    cols = G.im2col(planes, list(k), [1, 1], list(pad), list(st))    # (P, kh*kw, L')
    hh, ww = planes.shape[-2:]
    full_oh = (hh + 2 * pad[0] - k[0]) // st[0] + 1
    full_ow = (ww + 2 * pad[1] - k[1]) // st[1] + 1
    sums = G.reshape(G.sum(cols, [1]), (-1, full_oh, full_ow))
    if full_oh != oh or full_ow != ow:
        sums = G.narrow(G.narrow(sums, 1, 0, oh), 2, 0, ow)
    if divisor_override:
        out = sums / divisor_override
    else:
        div = nn_ops.avg_pool_divisors(h, w, k, st, pad, oh, ow, count_include_pad)
        out = sums / G.tensor(div, dtype=self.dtype, device=self.device)
    return G.reshape(out, (*shape[:-2], oh, ow))
