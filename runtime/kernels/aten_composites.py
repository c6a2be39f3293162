"""CompositeImplicitAutograd kernels of aten-level ops that PyTorch's OpInfo database names (the ops that
torch.compile's decompositions and the functional layers lower to): `native_batch_norm` and its
variants, `native_group_norm`, `_softmax_backward_data`, `_safe_softmax`, `constant_pad_nd`,
`native_dropout_backward`, `grid_sampler_2d/3d`, `_unsafe_masked_index(_put_accumulate)`, `_chunk_cat`
and `_upsample_bilinear2d_aa`.

Each is written with other ops (the functional layers' kernels where one exists), so autograd, second
derivatives and both backends come from those ops.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import opcall


def _G() -> Any:
    return opcall.api


def _opmath(t: Any) -> Any:
    """float16 (and bfloat16) data computed in float32, as PyTorch's kernels do; other dtypes as they are."""
    G = _G()
    return t.to(dtype=G.float32) if t is not None and t.dtype in (G.float16, G.bfloat16) else t


def _back(t: Any, dtype: Any) -> Any:
    return t if t.dtype == dtype else t.to(dtype=dtype)


# ---- softmax ----------------------------------------------------------------------------------------------

def softmax_backward_data(grad_output: Any, output: Any, dim: int, input_dtype: Any) -> Any:
    """The gradient of softmax's input from its output y: y * (g - sum(g * y, dim)), in `input_dtype`."""
    G = _G()
    g, y = _opmath(grad_output), _opmath(output)
    product = g * y
    grad_input = product - y * G.sum(product, dim, True)
    return _back(grad_input, input_dtype)


def safe_softmax(input: Any, dim: int, dtype: Any = None) -> Any:
    """softmax, except that a slice whose every element is -inf gives zeros (softmax gives NaN there)."""
    G = _G()
    if input.numel() == 0:
        return G.softmax(input, dim, dtype=dtype)
    all_masked = G.all(G.eq(input, -math.inf), dim, True)
    # those slices are zeroed before the softmax too, so that neither the result nor its gradient is NaN
    finite = G.where(all_masked, G.zeros((), dtype=input.dtype, device=input.device), input)
    out = G.softmax(finite, dim, dtype=dtype)
    return G.where(all_masked, G.zeros((), dtype=out.dtype, device=out.device), out)


# ---- normalization ----------------------------------------------------------------------------------------

def _batch_stats(input: Any) -> tuple[Any, Any]:
    """Per-channel mean and biased variance over every dim but 1."""
    G = _G()
    dims = [0, *range(2, input.dim())]
    return G.mean(input, dims), G.var(input, dims, correction=0)


def _affine(out: Any, weight: Any, bias: Any, shape: list[int]) -> Any:
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def _update_running(running_mean: Any, running_var: Any, mean: Any, var: Any, momentum: float, count: int) -> None:
    """running = (1 - momentum) running + momentum batch, the variance unbiased, in place and unrecorded."""
    G = _G()
    with G.no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.to(dtype=running_mean.dtype), alpha=momentum)
        if running_var is not None:
            unbiased = var * (count / max(count - 1, 1))
            running_var.mul_(1 - momentum).add_(unbiased.to(dtype=running_var.dtype), alpha=momentum)


def _check_channels(name: str, input: Any, **per_channel: Any) -> None:
    if input.dim() < 2:
        raise RuntimeError(f"{name}(): expected an input of at least 2 dimensions (N, C, ...), got "
                           f"{list(input.shape)}")
    channels = input.shape[1]
    for arg, t in per_channel.items():
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name}(): {arg} should contain {channels} elements (one per channel), not "
                               f"{t.numel()}")


def native_batch_norm(input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any, training: bool,
                      momentum: float, eps: float) -> tuple[Any, Any, Any]:
    """(output, save_mean, save_invstd): in training the batch statistics (and the running ones updated in
    place); in evaluation the running statistics normalise and the saved ones are empty. float16 computes
    in float32."""
    _check_channels("native_batch_norm", input, weight=weight, bias=bias, running_mean=running_mean,
                    running_var=running_var)
    out, mean, invstd = _batch_norm(_opmath(input), _opmath(weight), _opmath(bias), running_mean, running_var,
                                    training, momentum, eps)
    return _back(out, input.dtype), _back(mean, input.dtype), _back(invstd, input.dtype)


def _batch_norm(input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any, training: bool,
                momentum: float, eps: float) -> tuple[Any, Any, Any]:
    G = _G()
    shape = [1, input.shape[1]] + [1] * (input.dim() - 2)
    if training:
        if input.numel() == 0:
            raise RuntimeError(f"native_batch_norm(): training needs an input with at least one element, got "
                               f"shape {list(input.shape)}")
        mean, var = _batch_stats(input)
        invstd = G.rsqrt(var + eps)
        count = input.numel() // max(input.shape[1], 1)
        _update_running(running_mean, running_var, mean.detach(), var.detach(), momentum, count)
        out = (input - mean.reshape(shape)) * invstd.reshape(shape)
        # the saved statistics are for a backward formula, not differentiable outputs (as in aten)
        return _affine(out, weight, bias, shape), mean.detach(), invstd.detach()
    if running_mean is None or running_var is None:
        raise RuntimeError("native_batch_norm(): evaluation (training=False) needs running_mean and running_var")
    rm, rv = _opmath(running_mean).reshape(shape), _opmath(running_var).reshape(shape)
    out = (input - rm) * G.rsqrt(rv + eps)
    empty = G.empty((0,), dtype=input.dtype, device=input.device)
    return _affine(out, weight, bias, shape), empty, empty.clone()


def native_batch_norm_legit(input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any,
                            training: bool, momentum: float, eps: float) -> tuple[Any, Any, Any]:
    """native_batch_norm (aten's functionalization name); without running statistics only training=True
    normalises (aten's `no_stats` overload is this call with running_mean=running_var=None)."""
    return native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def batch_norm_with_update(input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any,
                           momentum: float, eps: float) -> tuple[Any, Any, Any, Any]:
    """Training-mode batch norm that updates the running statistics: (output, save_mean, save_invstd,
    reserve), the reserve an empty uint8 tensor (opgen needs no workspace)."""
    G = _G()
    out, mean, invstd = native_batch_norm(input, weight, bias, running_mean, running_var, True, momentum, eps)
    return out, mean, invstd, G.empty((0,), dtype=G.uint8, device=input.device)


def native_group_norm(input: Any, weight: Any, bias: Any, N: int, C: int, HxW: int, group: int,
                      eps: float) -> tuple[Any, Any, Any]:
    """(output, mean, rstd) of group normalisation; mean and rstd have shape (N, group)."""
    G = _G()
    if input.numel() != N * C * HxW or input.dim() < 2 or input.shape[0] != N or input.shape[1] != C:
        raise RuntimeError(f"native_group_norm(): the input of shape {list(input.shape)} does not have N={N}, "
                           f"C={C} and HxW={HxW} elements per channel")
    if group <= 0 or C % group:
        raise RuntimeError(f"native_group_norm(): the number of channels C={C} must be divisible by group={group}")
    _check_channels("native_group_norm", input, weight=weight, bias=bias)
    if not input.is_contiguous():
        raise RuntimeError("native_group_norm(): expects a contiguous input, as aten's kernel does (F.group_norm "
                           "takes any layout)")
    dtype = input.dtype
    input, weight, bias = _opmath(input), _opmath(weight), _opmath(bias)
    grouped = input.reshape([N, group, (C // group) * HxW])
    mean = G.mean(grouped, [2], True)
    rstd = G.rsqrt(G.var(grouped, [2], correction=0, keepdim=True) + eps)
    out = ((grouped - mean) * rstd).reshape(list(input.shape))
    shape = [1, C] + [1] * (input.dim() - 2)
    return (_back(_affine(out, weight, bias, shape), dtype), _back(mean.reshape([N, group]), dtype),
            _back(rstd.reshape([N, group]), dtype))


# ---- padding, dropout, sampling ---------------------------------------------------------------------------

def constant_pad_nd(input: Any, pad: Sequence[int], value: Any = 0) -> Any:
    """F.pad(input, pad, 'constant', value): pairs of (before, after) from the last dim back."""
    return _G().nn.functional.pad(input, list(pad), "constant", value)


def native_dropout_backward(grad_output: Any, mask: Any, scale: float) -> Any:
    """grad_output * mask * scale (the mask of native_dropout's kept elements)."""
    return grad_output * (mask.to(dtype=grad_output.dtype) * scale)


_INTERPOLATION = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")


def _grid_sampler(name: str, nd: int, input: Any, grid: Any, interpolation_mode: int, padding_mode: int,
                  align_corners: bool) -> Any:
    if not 0 <= interpolation_mode < len(_INTERPOLATION):
        raise RuntimeError(f"{name}(): interpolation_mode must be 0 (bilinear), 1 (nearest) or 2 (bicubic), "
                           f"got {interpolation_mode}")
    if not 0 <= padding_mode < len(_PADDING):
        raise RuntimeError(f"{name}(): padding_mode must be 0 (zeros), 1 (border) or 2 (reflection), got "
                           f"{padding_mode}")
    if input.dim() != nd + 2:
        raise RuntimeError(f"{name}(): expected a {nd + 2}-D input, got {list(input.shape)}")
    out = _G().nn.functional.grid_sample(_opmath(input), _opmath(grid), _INTERPOLATION[interpolation_mode],
                                         _PADDING[padding_mode], bool(align_corners))
    return _back(out, input.dtype)


def grid_sampler_2d(input: Any, grid: Any, interpolation_mode: int, padding_mode: int, align_corners: bool) -> Any:
    """F.grid_sample of a 4-D input with the modes given as aten's integers."""
    return _grid_sampler("grid_sampler_2d", 2, input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input: Any, grid: Any, interpolation_mode: int, padding_mode: int, align_corners: bool) -> Any:
    """F.grid_sample of a 5-D input with the modes given as aten's integers."""
    return _grid_sampler("grid_sampler_3d", 3, input, grid, interpolation_mode, padding_mode, align_corners)


# ---- masked indexing --------------------------------------------------------------------------------------

def _checked_indices(name: str, input: Any, mask: Any, indices: Sequence[Any]) -> list[Any]:
    """The indices clamped into [-size, size) of their dim of `input` (a negative one counts from the end,
    as in indexing), as PyTorch's kernels do."""
    G = _G()
    if mask.dtype != G.bool:
        raise RuntimeError(f"{name}(): the mask must be a bool tensor, got {mask.dtype}")
    if len(indices) > input.dim():
        raise IndexError(f"{name}(): {len(indices)} indices for a tensor of {input.dim()} dims")
    out = []
    for d, index in enumerate(indices):
        if index is None:
            out.append(None)
            continue
        if index.dtype not in (G.int64, G.int32):
            raise IndexError(f"{name}(): tensors used as indices must be int64 or int32, got {index.dtype} at "
                             f"position {d}")
        size = input.shape[d]
        out.append(G.clamp(index, -size, size - 1))
    return out


def unsafe_masked_index(input: Any, mask: Any, indices: Sequence[Any], fill: Any) -> Any:
    """input[indices] where `mask` holds, `fill` elsewhere; indices outside the input are clamped into it
    (the positions they stand at are expected to be masked out)."""
    G = _G()
    clamped = _checked_indices("_unsafe_masked_index", input, mask, indices)
    if input.numel() == 0:
        shape = G.broadcast_shapes(*[tuple(i.shape) for i in clamped if i is not None])
        rest = list(input.shape[len(clamped):])
        return G.full(list(shape) + rest, fill, dtype=input.dtype, device=input.device)
    gathered = G.index(input, clamped)
    return G.where(mask, gathered, G.full((), fill, dtype=input.dtype, device=input.device))


def unsafe_masked_index_put_accumulate(input: Any, mask: Any, indices: Sequence[Any], values: Any) -> Any:
    """input with `values` added at `indices` where `mask` holds (indices clamped into the input)."""
    G = _G()
    clamped = _checked_indices("_unsafe_masked_index_put_accumulate", input, mask, indices)
    if input.numel() == 0:
        return input.clone()
    kept = G.where(mask, values, G.zeros((), dtype=values.dtype, device=values.device))
    return G.index_put(input, clamped, kept, True)


def chunk_cat(tensors: Sequence[Any], dim: int, num_chunks: int) -> Any:
    """Each tensor split into `num_chunks` chunks along `dim` (zero-padded to a multiple), each chunk
    flattened from `dim` on, and the chunks concatenated: shape (*leading, num_chunks, sum of chunk sizes)."""
    G = _G()
    if num_chunks < 1:
        raise RuntimeError(f"_chunk_cat(): num_chunks must be positive, got {num_chunks}")
    if not tensors:
        raise RuntimeError("_chunk_cat(): expects a non-empty list of tensors")
    first = tensors[0]
    for t in tensors:
        if t.numel() == 0:
            raise RuntimeError("_chunk_cat(): expects non-empty tensors")
        if t.dtype != first.dtype or t.device != first.device:
            raise RuntimeError("_chunk_cat(): expects tensors of one dtype and device")
    if len({t.dim() for t in tensors}) == 1:
        ndim = first.dim()
        if not -ndim <= dim < ndim:
            raise IndexError(f"_chunk_cat(): dim {dim} out of range for tensors of {ndim} dims")
        dim %= ndim
    elif dim < 0 or any(dim >= t.dim() for t in tensors):
        raise RuntimeError("_chunk_cat(): tensors of different ranks need a non-negative dim below every rank")
    leading = list(first.shape[:dim])
    pieces = []
    for t in tensors:
        if list(t.shape[:dim]) != leading:
            raise RuntimeError(f"_chunk_cat(): the dims before {dim} must agree, got {list(t.shape)} and "
                               f"{list(first.shape)}")
        size = t.shape[dim]
        padded = -(-size // num_chunks) * num_chunks
        if padded != size:
            t = constant_pad_nd(t, [0, 0] * (t.dim() - dim - 1) + [0, padded - size], 0)
        pieces.append(t.reshape(leading + [num_chunks, -1]))
    return G.cat(pieces, dim + 1)


# ---- antialiased bilinear resampling ----------------------------------------------------------------------

def _aa_weights(in_size: int, out_size: int, align_corners: bool, scale: float | None,
                precision: type[np.floating[Any]]) -> np.ndarray:
    """The (out_size, in_size) matrix of antialiased linear interpolation along one dim: a triangle filter
    stretched by the downscaling factor (so each output averages every input it covers), each row
    normalised to sum 1. Output i is centred at ratio * (i + 0.5) in input pixels. The arithmetic is done
    in `precision`, the input's, as PyTorch's kernel does, so that the filter's taps and weights agree."""
    ft = precision
    if align_corners:
        ratio = ft(in_size - 1) / ft(out_size - 1) if out_size > 1 else ft(0)
    else:
        ratio = ft(1.0 / scale) if scale is not None and scale > 0 else ft(in_size) / ft(out_size)
    support = ratio if ratio >= 1 else ft(1)
    invscale = ft(1) / ratio if ratio >= 1 else ft(1)
    weights = np.zeros((out_size, in_size), dtype=ft)
    for i in range(out_size):
        center = ratio * ft(i + 0.5)
        lo = max(int(center - support + ft(0.5)), 0)
        hi = min(int(center + support + ft(0.5)), in_size)
        j = np.arange(lo, hi).astype(ft)
        w = np.maximum(ft(1) - np.abs((j - center + ft(0.5)) * invscale), ft(0)).astype(ft)
        total = w.sum(dtype=ft)
        weights[i, lo:hi] = w / total if total != 0 else w
    return weights


def _fixed_point_pass(image: np.ndarray, weights: np.ndarray, axis: int) -> np.ndarray:
    """One separable pass of uint8 resampling along `axis`, in fixed point as PyTorch's uint8 kernel: the
    weights scaled by 2**p (p as large as int16 holds) and rounded, the sums rounded and clamped to uint8."""
    bits = 0
    while bits < 15 and int(0.5 + weights.max() * (1 << (bits + 1))) < (1 << 15):
        bits += 1
    scaled = weights * (1 << bits)
    fixed = np.trunc(np.where(scaled < 0, scaled - 0.5, scaled + 0.5)).astype(np.int64)
    moved = np.moveaxis(image.astype(np.int64), axis, -1)
    total = (moved @ fixed.T + (1 << max(bits - 1, 0))) >> bits
    return np.moveaxis(np.clip(total, 0, 255).astype(np.uint8), -1, axis)


def upsample_bilinear2d_aa_scales(input: Any, output_size: Sequence[int], align_corners: bool,
                                  scales_h: float | None = None, scales_w: float | None = None) -> Any:
    """Antialiased bilinear resize to `output_size`; `scales_h`/`scales_w`, where given, are the scale
    factors that place the output's pixels (1 / scale in input pixels per output pixel)."""
    return _resize_aa(input, output_size, None, align_corners, [scales_h, scales_w])


def upsample_bilinear2d_aa(input: Any, output_size: Sequence[int] | None, align_corners: bool,
                           scale_factors: Sequence[float] | None) -> Any:
    """Antialiased bilinear resize of the last two dims of (N, C, H, W) to `output_size` or by
    `scale_factors` (exactly one of them), as interpolate(mode='bilinear', antialias=True)."""
    return _resize_aa(input, output_size, scale_factors, align_corners, [None, None])


def _resize_aa(input: Any, output_size: Sequence[int] | None, scale_factors: Sequence[float] | None,
               align_corners: bool, scales: list[float | None]) -> Any:
    G = _G()
    if input.dim() != 4:
        raise RuntimeError(f"_upsample_bilinear2d_aa(): expected a 4-D input (N, C, H, W), got {list(input.shape)}")
    in_h, in_w = input.shape[2], input.shape[3]
    if scale_factors is None:
        if output_size is None:
            raise RuntimeError("_upsample_bilinear2d_aa(): give exactly one of output_size and scale_factors")
        if len(output_size) != 2:
            raise RuntimeError(f"_upsample_bilinear2d_aa(): output_size must have 2 elements, got {list(output_size)}")
        out_h, out_w = int(output_size[0]), int(output_size[1])
    else:
        if output_size is not None:
            raise RuntimeError("_upsample_bilinear2d_aa(): give exactly one of output_size and scale_factors")
        if len(scale_factors) != 2:
            raise RuntimeError(f"_upsample_bilinear2d_aa(): scale_factors must have 2 elements, got "
                               f"{list(scale_factors)}")
        out_h, out_w = math.floor(in_h * scale_factors[0]), math.floor(in_w * scale_factors[1])
        scales = [float(scale_factors[0]), float(scale_factors[1])]
    if out_h <= 0 or out_w <= 0 or in_h <= 0 or in_w <= 0:
        raise RuntimeError(f"_upsample_bilinear2d_aa(): input ({in_h}, {in_w}) and output ({out_h}, {out_w}) sizes "
                           f"must be positive")
    if input.dtype == G.uint8 and input.is_meta:  # the fixed-point passes run on values (Note [Meta tensors])
        return G.empty((input.shape[0], input.shape[1], out_h, out_w), dtype=G.uint8, device="meta")
    if input.dtype == G.uint8:
        wh = _aa_weights(in_h, out_h, align_corners, scales[0], np.float64)
        ww = _aa_weights(in_w, out_w, align_corners, scales[1], np.float64)
        image = _fixed_point_pass(input.numpy(force=True), ww, 3)
        return G.tensor(np.ascontiguousarray(_fixed_point_pass(image, wh, 2)), dtype=G.uint8, device=input.device)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"_upsample_bilinear2d_aa(): expected a floating or uint8 input, got {input.dtype}")
    precision = np.float64 if input.dtype == G.float64 else np.float32
    wh = G.tensor(_aa_weights(in_h, out_h, align_corners, scales[0], precision), dtype=input.dtype,
                  device=input.device)
    ww = G.tensor(_aa_weights(in_w, out_w, align_corners, scales[1], precision), dtype=input.dtype,
                  device=input.device)
    return G.matmul(G.matmul(wh, input), ww.transpose(0, 1))
