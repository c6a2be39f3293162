"""CompositeImplicitAutograd kernels of the normalization layers, attention and adaptive pooling.

Each is written with other ops, so autograd and both backends come for free. Statistics are the biased
(population) variance, as PyTorch normalises with; the running variance of batch_norm is updated with
the unbiased one, as PyTorch does.
"""

from __future__ import annotations

import math
from typing import Any

from runtime import opcall
from runtime.kernels._xp import as_tuple, wrap, xp_of


def _G() -> Any:
    return opcall.api


def _normalize(x: Any, mean: Any, var: Any, eps: float) -> Any:
    return (x - mean) * _G().rsqrt(var + eps)


def batch_norm(input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool = True) -> Any:
    """Normalise each channel (dim 1) over the batch and spatial dims; in training, update the running stats
    in place as running = (1 - momentum) * running + momentum * batch_stat."""
    G = _G()
    if input.dim() < 2:
        raise ValueError(f"Expected 2D or more input to batch_norm (got {input.dim()}D input)")
    c = input.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"running_mean should contain {c} elements not {t.numel()}" if name.startswith(
                "running") else f"{name} should contain {c} elements not {t.numel()}")
    dims = [0, *range(2, input.dim())]
    shape = [1, c] + [1] * (input.dim() - 2)
    if input.numel() == 0:
        # as PyTorch: an empty batch has no statistics (the running ones are left alone); only the affine part
        out = G.clone(input)
    elif training:
        n = input.numel() // max(c, 1)
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"{list(input.shape)}")
        mean = G.mean(input, dims, keepdim=True)
        var = G.var(input, dims, correction=0, keepdim=True)
        if running_mean is not None or running_var is not None:
            with G.no_grad():
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(G.reshape(mean, (c,)).to(running_mean.dtype),
                                                         alpha=momentum)
                if running_var is not None:
                    unbiased = G.reshape(var, (c,)) * (n / (n - 1))
                    running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype), alpha=momentum)
        out = _normalize(input, mean, var, eps)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        out = _normalize(input, G.reshape(running_mean, shape), G.reshape(running_var, shape), eps)
    if weight is not None:
        out = out * G.reshape(weight, shape)
    if bias is not None:
        out = out + G.reshape(bias, shape)
    return out


def _layer_norm_shape(input: Any, normalized_shape: Any, weight: Any, bias: Any) -> list[int]:
    """The normalized shape as a list, after PyTorch's checks of input, weight and bias against it."""
    norm_shape = [int(normalized_shape)] if isinstance(normalized_shape, int) else [int(s) for s in normalized_shape]
    k = len(norm_shape)
    if k == 0 or input.dim() < k or list(input.shape[input.dim() - k:]) != norm_shape:
        raise RuntimeError(f"Given normalized_shape={norm_shape}, expected input with shape "
                           f"[*, {', '.join(map(str, norm_shape))}], but got input of size{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t.shape) != norm_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(t.shape)} and normalized_shape = {norm_shape}")
    return norm_shape


def layer_norm(input: Any, normalized_shape: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5,
               cudnn_enable: bool = True) -> Any:
    """Normalise over the last len(normalized_shape) dims, then scale and shift elementwise (one fused kernel,
    native_layer_norm, with its own derivative)."""
    norm_shape = _layer_norm_shape(input, normalized_shape, weight, bias)
    return _G().native_layer_norm(input, norm_shape, weight, bias, eps)[0]


def native_layer_norm(input: Any, normalized_shape: Any, weight: Any, bias: Any, eps: float) -> tuple[Any, Any, Any]:
    """(output, mean, rstd) in one pass over the array (CPU and CUDA); mean and rstd keep the normalized dims
    as size 1, as the backward formulas of derivatives.yaml read them."""
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"\"LayerNormKernelImpl\" not implemented for '{input._dtype.name}'")
    k = len(_layer_norm_shape(input, normalized_shape, weight, bias))
    a = input._data
    xp = xp_of(a)
    axes = tuple(range(a.ndim - k, a.ndim))
    mean = a.mean(axis=axes, keepdims=True)
    centered = a - mean
    rstd = 1 / xp.sqrt((centered * centered).mean(axis=axes, keepdims=True) + a.dtype.type(eps))
    out = centered * rstd
    if not out.flags.c_contiguous:  # PyTorch's layer norm result is contiguous whatever the input's layout
        out = out.copy(order="C")
    if weight is not None:
        out *= weight._data
    if bias is not None:
        out += bias._data
    dt = input._dtype
    return wrap(out, a, dt), wrap(mean, a, dt), wrap(rstd, a, dt)


def group_norm(input: Any, num_groups: int, weight: Any = None, bias: Any = None, eps: float = 1e-5,
               cudnn_enabled: bool = True) -> Any:
    """Normalise each of `num_groups` groups of channels of each sample, then scale and shift per channel."""
    G = _G()
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    n, c = input.shape[0], input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input "
                           f"of shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    grouped = G.reshape(input, (n, num_groups, input.numel() // max(n * num_groups, 1)))
    mean = G.mean(grouped, [2], keepdim=True)
    var = G.var(grouped, [2], correction=0, keepdim=True)
    out = G.reshape(_normalize(grouped, mean, var, eps), input.shape)
    shape = [1, c] + [1] * (input.dim() - 2)
    if weight is not None:
        out = out * G.reshape(weight, shape)
    if bias is not None:
        out = out + G.reshape(bias, shape)
    return out


# -- adaptive pooling -------------------------------------------------------------------------------

def _bin_matrix(size: int, out: int, dtype: Any, device: Any) -> Any:
    """(out, size) averaging matrix: row i averages input[floor(i*size/out) : ceil((i+1)*size/out)]."""
    import numpy as np
    m = np.zeros((out, size))
    for i in range(out):
        start, end = (i * size) // out, -(-((i + 1) * size) // out)
        m[i, start:end] = 1.0 / (end - start)
    return _G().tensor(m, dtype=dtype, device=device)


def adaptive_avg_pool2d(self: Any, output_size: Any) -> Any:
    """Average over PyTorch's adaptive bins, as two small matrix products: P_h @ x @ P_w^T."""
    G = _G()
    if self.dim() not in (3, 4) or any(s == 0 for s in self.shape[-2:]):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(self.shape)}")
    oh, ow = as_tuple(output_size, 2)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
                           f"received {[oh, ow]}")
    h, w = self.shape[-2:]
    if (h, w) == (oh, ow):
        return G.clone(self)
    ph = _bin_matrix(h, oh, self.dtype, self.device)
    pw = _bin_matrix(w, ow, self.dtype, self.device)
    return G.matmul(G.matmul(ph, self), G.t(pw))


# -- attention --------------------------------------------------------------------------------------

def scaled_dot_product_attention(query: Any, key: Any, value: Any, attn_mask: Any = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Any:
    """softmax(q k^T * scale + mask) v over the last two dims; a bool mask keeps the True positions."""
    G = _G()
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError("scaled_dot_product_attention: query, key and value must have at least 2 dimensions")
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"Expected query and key to have the same last dimension, but got {query.shape[-1]} "
                           f"and {key.shape[-1]}")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"Expected key and value to have the same sequence length, but got {key.shape[-2]} "
                           f"and {value.shape[-2]}")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if enable_gqa and query.dim() >= 3 and query.shape[-3] != key.shape[-3]:
        reps = query.shape[-3] // key.shape[-3]
        key = G.repeat_interleave(key, reps, -3)
        value = G.repeat_interleave(value, reps, -3)
    L, S = query.shape[-2], key.shape[-2]
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    scores = G.matmul(query, G.transpose(key, -2, -1)) * s
    if is_causal:
        attn_mask = G.tril(G.ones((L, S), dtype=G.bool, device=query.device))
    if attn_mask is not None:
        if attn_mask.dtype is G.bool:
            scores = G.masked_fill(scores, G.logical_not(attn_mask), float("-inf"))
        else:
            scores = scores + attn_mask
    weights = G.softmax(scores, -1)
    if dropout_p > 0.0:
        weights = G.dropout(weights, dropout_p, True)
    return G.matmul(weights, value)
