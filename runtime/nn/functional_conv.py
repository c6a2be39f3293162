"""Convolutions in 1, 2 and 3 dims, their transposes, and `F.unfold`/`F.fold`, from the 2-D convolution ops.

Everything reduces to `conv2d` (columns + GEMM, runtime/kernels/conv_ops.py) and its input gradient
`_conv2d_backward_input`, both with derivatives, so values, first and second gradients come from those ops:
- 1-D is 2-D with a height of one.
- 3-D gathers, for every output depth, the KD input planes its kernel reads (`index_select` along depth), folds
  them into the channels (channel `c * KD + kd`, which keeps each group's channels together) and runs one
  2-D convolution over the (N * D_out) plane stacks: one GEMM, no loop.
- A transposed convolution is the input gradient of a convolution (`_conv2d_backward_input`); in 3-D the KD
  depth taps come out as channels and are summed into their output depths with one `index_add`.
`padding='same'|'valid'` is resolved here: 'same' pads dilation * (kernel - 1) in total per dim, the odd one on
the right (an explicit `F.pad` first when the split is uneven), and needs stride 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import opcall
from runtime.amp import autocast_function
from runtime.nn.functional_pad import pad as _pad
from runtime.tensor import Tensor

IntOrTuple = int | Sequence[int]


def _G() -> Any:
    return opcall.api


def _tuple(value: IntOrTuple, n: int, name: str) -> tuple[int, ...]:
    if isinstance(value, int):
        return (value,) * n
    out = tuple(int(v) for v in value)
    if len(out) == 1:
        return out * n
    if len(out) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match the "
                           f"convolution dimensions, but got {name}={list(out)}")
    return out


def _batched(input: Tensor, weight: Tensor, nd: int, name: str) -> tuple[Tensor, bool]:
    """The input with a batch dim (and whether one was added); checks the ranks."""
    if weight.dim() != nd + 2:
        raise RuntimeError(f"{name}: expected a {nd + 2}-D weight, got {list(weight.shape)}")
    if input.dim() == nd + 1:
        return input.unsqueeze(0), True
    if input.dim() != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input "
                           f"of size: {list(input.shape)}")
    return input, False


def _resolve_padding(x: Tensor, weight: Tensor, padding: Any, stride: tuple[int, ...],
                     dilation: tuple[int, ...], nd: int, name: str) -> tuple[Tensor, tuple[int, ...]]:
    """Numeric padding per dim; 'same' with an uneven total pads the input's right side explicitly."""
    if not isinstance(padding, str):
        return x, _tuple(padding, nd, "padding")
    if padding == "valid":
        return x, (0,) * nd
    if padding != "same":
        raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
    if any(s != 1 for s in stride):
        raise ValueError(f"{name}: padding='same' is not supported for strided convolutions")
    totals = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:], strict=True)]
    extra = [t % 2 for t in totals]
    if any(extra):
        pads: list[int] = []
        for e in reversed(extra):
            pads += [0, e]
        x = _pad(x, pads)
    return x, tuple(t // 2 for t in totals)


def _add_bias(out: Tensor, bias: Tensor | None, nd: int) -> Tensor:
    return out if bias is None else out + bias.reshape([-1] + [1] * nd)


def _conv3d_batched(x: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple[int, ...],
                    padding: tuple[int, ...], dilation: tuple[int, ...], groups: int) -> Tensor:
    G = _G()
    n, c, depth = x.shape[0], x.shape[1], x.shape[2]
    out_c, kd = weight.shape[0], weight.shape[2]
    if padding[0]:
        x = _pad(x, [0, 0, 0, 0, padding[0], padding[0]])
        depth = x.shape[2]
    d_out = (depth - dilation[0] * (kd - 1) - 1) // stride[0] + 1
    if d_out <= 0:
        raise RuntimeError(f"conv3d: the kernel's depth {kd} (dilation {dilation[0]}) is larger than the padded "
                           f"input depth {depth}")
    taps = (np.arange(d_out)[:, None] * stride[0] + np.arange(kd)[None, :] * dilation[0]).reshape(-1)
    planes = G.index_select(x, 2, G.tensor(taps, dtype=G.int64, device=x.device))
    h, w = x.shape[3], x.shape[4]
    planes = planes.reshape([n, c, d_out, kd, h, w]).permute([0, 2, 1, 3, 4, 5]).reshape([n * d_out, c * kd, h, w])
    w2 = weight.reshape([out_c, weight.shape[1] * kd, weight.shape[3], weight.shape[4]])
    out = G.conv2d(planes, w2, None, list(stride[1:]), list(padding[1:]), list(dilation[1:]), groups)
    out = out.reshape([n, d_out, out_c, out.shape[2], out.shape[3]]).permute([0, 2, 1, 3, 4])
    return _add_bias(out, bias, 3)


def _conv(input: Tensor, weight: Tensor, bias: Tensor | None, stride: IntOrTuple, padding: Any,
          dilation: IntOrTuple, groups: int, nd: int) -> Tensor:
    name = f"conv{nd}d"
    x, added = _batched(input, weight, nd, name)
    st, dil = _tuple(stride, nd, "stride"), _tuple(dilation, nd, "dilation")
    if any(s <= 0 for s in st):
        raise RuntimeError(f"{name}: non-positive stride is not supported")
    x, pad = _resolve_padding(x, weight, padding, st, dil, nd, name)
    if any(p < 0 for p in pad):
        raise RuntimeError(f"{name}: negative padding is not supported")
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(x.shape)} to have {weight.shape[1] * groups} channels, but got {x.shape[1]} "
                           f"channels instead")
    G = _G()
    if nd == 1:
        out = G.conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, [1, st[0]], [0, pad[0]], [1, dil[0]], groups)
        out = out.squeeze(2)
    elif nd == 2:
        out = G.conv2d(x, weight, bias, list(st), list(pad), list(dil), groups)
    else:
        out = _conv3d_batched(x, weight, bias, st, pad, dil, groups)
    return out.squeeze(0) if added else out


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntOrTuple = 1,
           padding: Any = 0, dilation: IntOrTuple = 1, groups: int = 1) -> Tensor:
    """1-D convolution over (N, C, L) or (C, L); `padding` may be 'same' or 'valid'."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-D convolution in time-batch-channel layout: input (T, B, C_in), weight (K, C_in, C_out), bias (C_out,),
    `pad` zeros at both ends of time; returns (T + 2*pad - K + 1, B, C_out)."""
    if input.dim() != 3:
        raise RuntimeError(f"conv_tbc: input must have 3 dims (time, batch, in_channel), got {input.dim()}")
    if weight.dim() != 3:
        raise RuntimeError(f"conv_tbc: weight must have 3 dims (kernel_width, in_channel, out_channel), got "
                           f"{weight.dim()}")
    if bias.dim() != 1:
        raise RuntimeError(f"conv_tbc: bias must have 1 dim (out_channel), got {bias.dim()}")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError(f"conv_tbc: input channels {input.shape[2]} != weight's in_channel {weight.shape[1]}")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError(f"conv_tbc: bias size {bias.shape[0]} != weight's out_channel {weight.shape[2]}")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntOrTuple = 1,
           padding: Any = 0, dilation: IntOrTuple = 1, groups: int = 1) -> Tensor:
    """2-D convolution over (N, C, H, W) or (C, H, W); `padding` may be 'same' or 'valid'."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


@autocast_function("conv3d")
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntOrTuple = 1,
           padding: Any = 0, dilation: IntOrTuple = 1, groups: int = 1) -> Tensor:
    """3-D convolution over (N, C, D, H, W) or (C, D, H, W); `padding` may be 'same' or 'valid'."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3)


def _transposed_size(size: int, stride: int, padding: int, dilation: int, kernel: int, output_padding: int) -> int:
    return (size - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1


def _conv_transpose(input: Tensor, weight: Tensor, bias: Tensor | None, stride: IntOrTuple, padding: IntOrTuple,
                    output_padding: IntOrTuple, groups: int, dilation: IntOrTuple, nd: int) -> Tensor:
    name = f"conv_transpose{nd}d"
    x, added = _batched(input, weight, nd, name)
    st, pad = _tuple(stride, nd, "stride"), _tuple(padding, nd, "padding")
    opad, dil = _tuple(output_padding, nd, "output_padding"), _tuple(dilation, nd, "dilation")
    for s, o, d in zip(st, opad, dil, strict=True):
        if o >= s and o >= d:
            raise RuntimeError(f"{name}: output padding must be smaller than either stride or dilation, but got "
                               f"output_padding={list(opad)}, stride={list(st)}, dilation={list(dil)}")
    if x.shape[1] != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input "
                           f"{list(x.shape)} to have {weight.shape[0]} channels, but got {x.shape[1]} channels "
                           f"instead")
    out_c = weight.shape[1] * groups
    if nd == 3:
        out = _conv_transpose3d_batched(x, weight, st, pad, opad, dil, groups)
    else:
        x2 = x.unsqueeze(2) if nd == 1 else x
        w2 = weight.unsqueeze(2) if nd == 1 else weight
        st2, pad2 = ((1,) + st, (0,) + pad) if nd == 1 else (st, pad)
        opad2, dil2 = ((0,) + opad, (1,) + dil) if nd == 1 else (opad, dil)
        out = _transposed_planes(x2, w2, st2, pad2, opad2, dil2, groups, out_c, name)
        out = out.squeeze(2) if nd == 1 else out
    out = _add_bias(out, bias, nd)
    return out.squeeze(0) if added else out


def _transposed_planes(x: Tensor, weight: Tensor, stride: Sequence[int], padding: Sequence[int],
                       output_padding: Sequence[int], dilation: Sequence[int], groups: int, out_channels: int,
                       name: str) -> Tensor:
    """2-D transposed convolution of (N, C, H, W): the whole (uncropped) result as the input gradient of a
    convolution, then the padding cropped from each side and output_padding added as zeros on the right. (An
    output_padding of at least the stride, allowed below the dilation, has no convolution it inverts.)"""
    G = _G()
    full = [(x.shape[2 + i] - 1) * stride[i] + dilation[i] * (weight.shape[2 + i] - 1) + 1 for i in range(2)]
    final = [full[i] - 2 * padding[i] + output_padding[i] for i in range(2)]
    if min(final) <= 0:
        raise RuntimeError(f"{name}: the output size {final} is not positive")
    out = G._conv2d_backward_input(x, weight, [x.shape[0], out_channels] + full, list(stride), [0, 0],
                                   list(dilation), groups)
    if any(padding) or any(output_padding):
        pads = [-padding[1], final[1] - (full[1] - padding[1]), -padding[0], final[0] - (full[0] - padding[0])]
        out = _pad(out, pads)
    return out


def _conv_transpose3d_batched(x: Tensor, weight: Tensor, stride: tuple[int, ...], padding: tuple[int, ...],
                              output_padding: tuple[int, ...], dilation: tuple[int, ...], groups: int) -> Tensor:
    """The KD depth taps as output channels of one 2-D transposed convolution over every input plane, then
    summed into output depth `d * stride + kd * dilation - padding` with one index_add."""
    G = _G()
    n, c, depth, h, w = x.shape
    per_group, kd, kh, kw = weight.shape[1], weight.shape[2], weight.shape[3], weight.shape[4]
    out_c = per_group * groups
    w2 = weight.permute([0, 1, 2, 3, 4]).reshape([c, per_group * kd, kh, kw])
    planes = x.permute([0, 2, 1, 3, 4]).reshape([n * depth, c, h, w])
    full = _transposed_size(depth, stride[0], 0, dilation[0], kd, output_padding[0])
    if full - 2 * padding[0] <= 0:
        raise RuntimeError(f"conv_transpose3d: the output depth {full - 2 * padding[0]} is not positive")
    taps = _transposed_planes(planes, w2, stride[1:], padding[1:], output_padding[1:], dilation[1:], groups,
                              out_c * kd, "conv_transpose3d")
    sizes = list(taps.shape[2:])
    taps = taps.reshape([n, depth, out_c, kd] + sizes).permute([0, 1, 3, 2, 4, 5]).reshape(
        [n, depth * kd, out_c] + sizes)
    where = (np.arange(depth)[:, None] * stride[0] + np.arange(kd)[None, :] * dilation[0]).reshape(-1)
    out = G.zeros([n, full, out_c] + sizes, dtype=x.dtype, device=x.device)
    out = G.index_add(out, 1, G.tensor(where, dtype=G.int64, device=x.device), taps)
    out = G.narrow(out, 1, padding[0], full - 2 * padding[0])
    return out.permute([0, 2, 1, 3, 4])


@autocast_function("conv_transpose1d")
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntOrTuple = 1,
                     padding: IntOrTuple = 0, output_padding: IntOrTuple = 0, groups: int = 1,
                     dilation: IntOrTuple = 1) -> Tensor:
    """Transposed 1-D convolution; weight (C_in, C_out // groups, K)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1)


@autocast_function("conv_transpose2d")
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntOrTuple = 1,
                     padding: IntOrTuple = 0, output_padding: IntOrTuple = 0, groups: int = 1,
                     dilation: IntOrTuple = 1) -> Tensor:
    """Transposed 2-D convolution; weight (C_in, C_out // groups, KH, KW)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2)


@autocast_function("conv_transpose3d")
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntOrTuple = 1,
                     padding: IntOrTuple = 0, output_padding: IntOrTuple = 0, groups: int = 1,
                     dilation: IntOrTuple = 1) -> Tensor:
    """Transposed 3-D convolution; weight (C_in, C_out // groups, KD, KH, KW)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3)


def unfold(input: Tensor, kernel_size: IntOrTuple, dilation: IntOrTuple = 1, padding: IntOrTuple = 0,
           stride: IntOrTuple = 1) -> Tensor:
    """Sliding local blocks (im2col): (N, C, H, W) -> (N, C * KH * KW, L); also (C, H, W) -> (C * KH * KW, L)."""
    if input.dim() not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)")
    G = _G()
    args = [list(_tuple(v, 2, n)) for v, n in ((kernel_size, "kernel_size"), (dilation, "dilation"),
                                                (padding, "padding"), (stride, "stride"))]
    return G.im2col(input, *args)


def fold(input: Tensor, output_size: IntOrTuple, kernel_size: IntOrTuple, dilation: IntOrTuple = 1,
         padding: IntOrTuple = 0, stride: IntOrTuple = 1) -> Tensor:
    """The sum of sliding blocks back into an image (col2im): (N, C * KH * KW, L) -> (N, C, H, W)."""
    if input.dim() not in (2, 3):
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
                                  f"(got {input.dim()}D)")
    G = _G()
    args = [list(_tuple(v, 2, n)) for v, n in ((output_size, "output_size"), (kernel_size, "kernel_size"),
                                                (dilation, "dilation"), (padding, "padding"), (stride, "stride"))]
    return G.col2im(input, *args)
