"""Pooling in 1, 2 and 3 dims: max (with indices), average, power-average, adaptive max/average, max_unpool.

Note [Pooling as a gather of windows]: every window of every pooled dim is a row of an index table
(out, k) into that dim, with a validity mask (False where the window reaches into padding or, for adaptive
pooling, past its variable-length end). One `index_select` per dim gathers the windows as new dims
(..., o1, k1, o2, k2, ...); after a permute they are the trailing dims, flattened to one. A max is then
`max(dim=-1)` (whose gradient goes to the one element picked, as PyTorch's), an average a masked sum over
a divisor. The tables are tiny NumPy arrays; the work is whole-tensor ops, so gradients come from the ops'
derivatives and the code runs on every device. The 2-D max and average pools keep their dedicated kernels
(runtime/kernels/nn_ops.py), which the 1-D forms use with a height of one.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from runtime import opcall
from runtime.tensor import Tensor

IntOrTuple = int | Sequence[int]
Table = tuple[np.ndarray, np.ndarray]  # (index (out, k), valid (out, k))


def _G() -> Any:
    return opcall.api


# Note [Pooling dtypes]
# Which bool and integer inputs PyTorch's CPU pooling kernels take (measured against torch 2.13): max_pool2d/3d
# every integer type but not bool; average pooling int64 alone; max_pool1d and the adaptive pools neither. The
# rest raise NotImplementedError (a RuntimeError) naming the kernel and the dtype, as PyTorch's do; the
# floating types are not restricted here.
_F = TypeVar("_F", bound=Callable[..., Any])


def _takes(integers: str) -> Callable[[_F], _F]:
    """The pooling function refuses bool inputs, and integer ones unless `integers` ("integers": all of them,
    "int64": that one) allows them (Note [Pooling dtypes])."""
    def wrap(fn: _F) -> _F:
        @functools.wraps(fn)
        def checked(input: Tensor, *args: Any, **kwargs: Any) -> Any:
            dtype = getattr(input, "dtype", None)
            if dtype is not None and not dtype.is_floating_point:
                bool_ = dtype.name == "bool"
                if bool_ or integers == "none" or (integers == "int64" and dtype.name != "int64"):
                    raise NotImplementedError(f'"{fn.__name__}" not implemented for '
                                              f"'{dtype.name.capitalize() if bool_ else dtype.name}'")
            return fn(input, *args, **kwargs)
        return checked  # type: ignore[return-value]
    return wrap


def _tuple(value: IntOrTuple | None, n: int, name: str, default: tuple[int, ...] | None = None) -> tuple[int, ...]:
    if value is None or (isinstance(value, Sequence) and len(value) == 0):
        if default is None:
            raise RuntimeError(f"{name} must be given")
        return default
    if isinstance(value, int):
        return (value,) * n
    out = tuple(int(v) for v in value)
    if len(out) == 1:
        return out * n
    if len(out) != n:
        raise RuntimeError(f"{name} must either be a single int, or a tuple of {n} ints, got {list(out)}")
    return out


def _check_input(input: Tensor, nd: int, name: str) -> None:
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D input tensor, but got {list(input.shape)}")
    if any(s == 0 for s in input.shape[-nd:]) or (input.dim() == nd + 2 and input.shape[-nd - 1] == 0):
        raise RuntimeError(f"{name}: Expected input's non-batch dimensions to have positive length, but input has a "
                           f"shape of {list(input.shape)}")


def _pool_out_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool, name: str) -> int:
    if s <= 0:
        raise RuntimeError(f"{name}: stride should be greater than zero, but got stride={s}")
    if p < 0 or p > k // 2:
        raise RuntimeError(f"{name}: pad should be at most half of effective kernel size, but got pad={p}, "
                           f"kernel_size={k}")
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    if out <= 0:
        raise RuntimeError(f"{name}: Given input size {size}, kernel {k}, stride {s}, padding {p}, dilation {d}: "
                           f"the output size {out} is too small")
    return out


def _window_table(size: int, out: int, k: int, s: int, p: int, d: int) -> Table:
    index = np.arange(out)[:, None] * s - p + np.arange(k)[None, :] * d
    return index, (index >= 0) & (index < size)


def _adaptive_table(size: int, out: int) -> Table:
    starts = (np.arange(out) * size) // out
    ends = -((-(np.arange(out) + 1) * size) // out)
    k = int((ends - starts).max()) if out else 0
    index = starts[:, None] + np.arange(k)[None, :]
    return index, index < ends[:, None]


def _gather(x: Tensor, tables: Sequence[Table]) -> tuple[Tensor, np.ndarray]:
    """The windows of the last len(tables) dims as one trailing dim: (..., o1, o2, .., K), and the mask
    (o1, o2, .., K)."""
    G = _G()
    nd = len(tables)
    base = x.dim() - nd
    for i, (index, _) in enumerate(tables):
        d = base + 2 * i
        size = x.shape[d]
        flat = np.clip(index, 0, size - 1).reshape(-1)
        x = G.index_select(x, d, G.tensor(flat, dtype=G.int64, device=x.device))
        x = x.reshape(list(x.shape[:d]) + list(index.shape) + list(x.shape[d + 1:]))
    order = list(range(base)) + [base + 2 * i for i in range(nd)] + [base + 2 * i + 1 for i in range(nd)]
    x = x.permute(order)
    outs = [t[0].shape[0] for t in tables]
    x = x.reshape(list(x.shape[:base]) + outs + [int(np.prod([t[0].shape[1] for t in tables]))])
    mask = np.ones([1] * (2 * nd), dtype=bool)
    for i, (_, valid) in enumerate(tables):
        shape = [1] * (2 * nd)
        shape[2 * i], shape[2 * i + 1] = valid.shape
        mask = mask & valid.reshape(shape)
    mask = mask.transpose([2 * i for i in range(nd)] + [2 * i + 1 for i in range(nd)]).reshape(outs + [-1])
    return x, mask


def _lowest(x: Tensor) -> float | int:
    if x.dtype.is_floating_point:
        return -math.inf
    if x.dtype == _G().bool:
        return False
    return int(np.iinfo(np.dtype(x.dtype.name)).min)


def _max_windows(x: Tensor, tables: Sequence[Table], input_sizes: Sequence[int]) -> tuple[Tensor, Tensor]:
    """The max of each window and its flat index into the pooled dims of the input."""
    G = _G()
    windows, mask = _gather(x, tables)
    if not mask.all():
        windows = G.where(G.tensor(mask, device=x.device), windows, _lowest(x))
    values, arg = G.max(windows, -1)
    # the flat input position of each (output position, window offset), looked up at the argmax
    nd = len(tables)
    acc = np.zeros([1] * (2 * nd), dtype=np.int64)
    for i, (index, _) in enumerate(tables):
        stride = int(np.prod(input_sizes[i + 1:], dtype=np.int64))
        shape = [1] * (2 * nd)
        shape[2 * i], shape[2 * i + 1] = index.shape
        acc = acc + np.clip(index, 0, input_sizes[i] - 1).reshape(shape) * stride
    outs = [t[0].shape[0] for t in tables]
    positions = acc.transpose([2 * i for i in range(nd)] + [2 * i + 1 for i in range(nd)]).reshape(outs + [-1])
    pos = G.tensor(np.ascontiguousarray(positions), dtype=G.int64, device=x.device)
    pos = pos.expand(list(arg.shape[:-len(outs)]) + list(positions.shape))
    indices = G.gather(pos, -1, arg.unsqueeze(-1)).squeeze(-1)
    return values, indices


def _max_pool(input: Tensor, kernel_size: IntOrTuple, stride: IntOrTuple | None, padding: IntOrTuple,
              dilation: IntOrTuple, ceil_mode: bool, return_indices: bool, nd: int) -> Any:
    name = f"max_pool{nd}d"
    _check_input(input, nd, name)
    k = _tuple(kernel_size, nd, "kernel_size")
    s = _tuple(stride, nd, "stride", k)
    p, d = _tuple(padding, nd, "padding"), _tuple(dilation, nd, "dilation")
    if any(v <= 0 for v in k) or any(v <= 0 for v in d):
        raise RuntimeError(f"{name}: kernel_size and dilation must be greater than zero, got {list(k)}, {list(d)}")
    sizes = list(input.shape[-nd:])
    outs = [_pool_out_size(sizes[i], k[i], s[i], p[i], d[i], ceil_mode, name) for i in range(nd)]
    tables = [_window_table(sizes[i], outs[i], k[i], s[i], p[i], d[i]) for i in range(nd)]
    values, indices = _max_windows(input, tables, sizes)
    return (values, indices) if return_indices else values


def _as_2d(values: tuple[int, ...], fill: int) -> list[int]:
    return [fill, values[0]]


@_takes("none")
def max_pool1d(input: Tensor, kernel_size: IntOrTuple, stride: IntOrTuple | None = None, padding: IntOrTuple = 0,
               dilation: IntOrTuple = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The 2-D max-pool kernel over a height of one (its flat index is the index along L)."""
    _check_input(input, 1, "max_pool1d")
    k = _tuple(kernel_size, 1, "kernel_size")
    s, p, d = _tuple(stride, 1, "stride", k), _tuple(padding, 1, "padding"), _tuple(dilation, 1, "dilation")
    _pool_out_size(input.shape[-1], k[0], s[0], p[0], d[0], ceil_mode, "max_pool1d")  # PyTorch's checks
    values, indices = _G().max_pool2d_with_indices(input.unsqueeze(-2), _as_2d(k, 1), _as_2d(s, 1), _as_2d(p, 0),
                                                   _as_2d(d, 1), ceil_mode)
    values, indices = values.squeeze(-2), indices.squeeze(-2)
    return (values, indices) if return_indices else values


@_takes("integers")
def max_pool2d(input: Tensor, kernel_size: IntOrTuple, stride: IntOrTuple | None = None, padding: IntOrTuple = 0,
               dilation: IntOrTuple = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max over sliding windows of a (N, C, H, W) or (C, H, W) input; stride defaults to kernel_size, return_indices
    also returns the argmax positions."""
    G = _G()
    st = [] if stride is None else stride
    if return_indices:
        return G.max_pool2d_with_indices(input, kernel_size, st, padding, dilation, ceil_mode)
    return G.max_pool2d(input, kernel_size, st, padding, dilation, ceil_mode)


@_takes("integers")
def max_pool3d(input: Tensor, kernel_size: IntOrTuple, stride: IntOrTuple | None = None, padding: IntOrTuple = 0,
               dilation: IntOrTuple = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max over sliding windows of a (N, C, D, H, W) or (C, D, H, W) input; stride defaults to kernel_size,
    return_indices also returns the argmax positions."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3)


def _divisors(sizes: Sequence[int], outs: Sequence[int], k: Sequence[int], s: Sequence[int], p: Sequence[int],
              count_include_pad: bool) -> np.ndarray:
    """PyTorch's divisor per output position: the window clipped to the padded input (count_include_pad) or to
    the input itself."""
    total = np.ones([1] * len(sizes))
    for i, (size, out) in enumerate(zip(sizes, outs, strict=True)):
        start = np.arange(out) * s[i] - p[i]
        end = np.minimum(start + k[i], size + p[i])
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, size)
        shape = [1] * len(sizes)
        shape[i] = out
        total = total * (end - start).reshape(shape)
    return total


def _avg_pool(input: Tensor, kernel_size: IntOrTuple, stride: IntOrTuple | None, padding: IntOrTuple,
              ceil_mode: bool, count_include_pad: bool, divisor_override: int | None, nd: int) -> Tensor:
    name = f"avg_pool{nd}d"
    _check_input(input, nd, name)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError(f"{name}: divisor must be not zero")
    G = _G()
    k = _tuple(kernel_size, nd, "kernel_size")
    s = _tuple(stride, nd, "stride", k)
    p = _tuple(padding, nd, "padding")
    sizes = list(input.shape[-nd:])
    outs = [_pool_out_size(sizes[i], k[i], s[i], p[i], 1, ceil_mode, name) for i in range(nd)]
    tables = [_window_table(sizes[i], outs[i], k[i], s[i], p[i], 1) for i in range(nd)]
    windows, mask = _gather(input, tables)
    if not mask.all():
        windows = G.where(G.tensor(mask, device=input.device), windows, 0)
    total = windows.sum(-1, dtype=input.dtype)
    if divisor_override is not None:
        divisor: Any = divisor_override
    else:
        divisor = G.tensor(_divisors(sizes, outs, k, s, p, count_include_pad), dtype=G.int64, device=input.device)
    if input.dtype.is_floating_point:
        return total / divisor
    return G.div(total, divisor, rounding_mode="trunc")


@_takes("int64")
def avg_pool1d(input: Tensor, kernel_size: IntOrTuple, stride: IntOrTuple | None = None, padding: IntOrTuple = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """Floating inputs: the 2-D average-pool kernel over a height of one."""
    if not input.is_floating_point() or input.numel() == 0:
        return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1)
    _check_input(input, 1, "avg_pool1d")
    k = _tuple(kernel_size, 1, "kernel_size")
    s, p = _tuple(stride, 1, "stride", k), _tuple(padding, 1, "padding")
    _pool_out_size(input.shape[-1], k[0], s[0], p[0], 1, ceil_mode, "avg_pool1d")
    out = _G().avg_pool2d(input.unsqueeze(-2), _as_2d(k, 1), _as_2d(s, 1), _as_2d(p, 0), ceil_mode,
                          count_include_pad, None)
    return out.squeeze(-2)


@opcall.takes_out("avg_pool2d")
@_takes("int64")
def avg_pool2d(input: Tensor, kernel_size: IntOrTuple, stride: IntOrTuple | None = None, padding: IntOrTuple = 0,
               ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Average over sliding windows of a (N, C, H, W) or (C, H, W) input; stride defaults to kernel_size,
    divisor_override replaces the window size as divisor."""
    if input.dtype.is_floating_point:
        return _G().avg_pool2d(input, kernel_size, [] if stride is None else stride, padding, ceil_mode,
                               count_include_pad, divisor_override)
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2)


@opcall.takes_out("avg_pool3d")
@_takes("int64")
def avg_pool3d(input: Tensor, kernel_size: IntOrTuple, stride: IntOrTuple | None = None, padding: IntOrTuple = 0,
               ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Average over sliding windows of a (N, C, D, H, W) or (C, D, H, W) input; stride defaults to kernel_size,
    divisor_override replaces the window size as divisor."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3)


def _lp_pool(input: Tensor, norm_type: float, kernel_size: IntOrTuple, stride: IntOrTuple | None,
             ceil_mode: bool, nd: int) -> Tensor:
    """(sum over the window of x ** p) ** (1 / p), as PyTorch: an average pool scaled by the window size."""
    G = _G()
    k = _tuple(kernel_size, nd, "kernel_size")
    pooled = _avg_pool(input.pow(norm_type), k, stride, 0, ceil_mode, True, None, nd)
    return (G.sign(pooled) * G.relu(pooled.abs())).mul(math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: IntOrTuple, stride: IntOrTuple | None = None,
              ceil_mode: bool = False) -> Tensor:
    """(sum of x ** norm_type over each window) ** (1 / norm_type) of a (N, C, L) or (C, L) input; stride defaults to
    kernel_size."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: IntOrTuple, stride: IntOrTuple | None = None,
              ceil_mode: bool = False) -> Tensor:
    """(sum of x ** norm_type over each window) ** (1 / norm_type) of a (N, C, H, W) or (C, H, W) input; stride
    defaults to kernel_size."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: IntOrTuple, stride: IntOrTuple | None = None,
              ceil_mode: bool = False) -> Tensor:
    """(sum of x ** norm_type over each window) ** (1 / norm_type) of a (N, C, D, H, W) or (C, D, H, W) input; stride
    defaults to kernel_size."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


def _adaptive_sizes(input: Tensor, output_size: Any, nd: int, name: str) -> list[int]:
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D tensor, but got {list(input.shape)}")
    size = [output_size] * nd if isinstance(output_size, int) or output_size is None else list(output_size)
    if len(size) == 1 and nd > 1:
        size = size * nd
    if len(size) != nd:
        raise RuntimeError(f"{name}: output_size must be {nd} values, got {output_size}")
    out = [input.shape[input.dim() - nd + i] if v is None else int(v) for i, v in enumerate(size)]
    if any(v < 0 for v in out):
        raise RuntimeError(f"{name}: output_size must be non-negative, got {out}")
    if any(v == 0 for v in input.shape[-nd:]):
        raise RuntimeError(f"{name}: Expected input to have non-zero size for non-batch dimensions, but input has "
                           f"sizes {list(input.shape)}")
    return out


def _adaptive_max(input: Tensor, output_size: Any, return_indices: bool, nd: int) -> Any:
    outs = _adaptive_sizes(input, output_size, nd, f"adaptive_max_pool{nd}d")
    sizes = list(input.shape[-nd:])
    values, indices = _max_windows(input, [_adaptive_table(sizes[i], outs[i]) for i in range(nd)], sizes)
    return (values, indices) if return_indices else values


@_takes("none")
def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pool of a (N, C, L) or (C, L) input into `output_size` near-equal windows per dim; return_indices also
    returns the argmax positions."""
    return _adaptive_max(input, output_size, return_indices, 1)


@_takes("none")
def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pool of a (N, C, H, W) or (C, H, W) input into `output_size` near-equal windows per dim; return_indices
    also returns the argmax positions."""
    return _adaptive_max(input, output_size, return_indices, 2)


@_takes("none")
def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pool of a (N, C, D, H, W) or (C, D, H, W) input into `output_size` near-equal windows per dim;
    return_indices also returns the argmax positions."""
    return _adaptive_max(input, output_size, return_indices, 3)


def _adaptive_avg(input: Tensor, output_size: Any, nd: int) -> Tensor:
    """Box averages are separable: one (size, out) averaging matrix per dim, applied with a matmul."""
    G = _G()
    outs = _adaptive_sizes(input, output_size, nd, f"adaptive_avg_pool{nd}d")
    x = input
    for i in range(nd):
        d = input.dim() - nd + i
        index, valid = _adaptive_table(input.shape[d], outs[i])
        weights = np.zeros((input.shape[d], outs[i]))
        rows, cols = np.nonzero(valid)
        weights[index[rows, cols], rows] = 1.0 / valid.sum(1)[rows]
        moved = x.movedim(d, -1)
        x = G.matmul(moved, G.tensor(weights, dtype=input.dtype, device=input.device)).movedim(-1, d)
    return x


@_takes("none")
def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """Average pool of a (N, C, L) or (C, L) input into `output_size` near-equal windows per dim."""
    return _adaptive_avg(input, output_size, 1)


@_takes("none")
def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average pool of a (N, C, H, W) or (C, H, W) input into `output_size` near-equal windows per dim."""
    size = _adaptive_sizes(input, output_size, 2, "adaptive_avg_pool2d")
    return _G().adaptive_avg_pool2d(input, size)


@_takes("none")
def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Average pool of a (N, C, D, H, W) or (C, D, H, W) input into `output_size` near-equal windows per dim."""
    return _adaptive_avg(input, output_size, 3)


def _max_unpool(input: Tensor, indices: Tensor, kernel_size: IntOrTuple, stride: IntOrTuple | None,
                padding: IntOrTuple, output_size: Any, nd: int) -> Tensor:
    """Scatter each pooled value to its recorded position in a zero output."""
    name = f"max_unpool{nd}d"
    G = _G()
    k = _tuple(kernel_size, nd, "kernel_size")
    s = _tuple(stride, nd, "stride", k)
    p = _tuple(padding, nd, "padding")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"{name}: Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    default = [(input.shape[input.dim() - nd + i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(nd)]
    if output_size is None:
        sizes = default
    else:
        sizes = [int(v) for v in output_size][-nd:]
        for i in range(nd):
            lo, hi = default[i] - s[i], default[i] + s[i]
            if not lo < sizes[i] < hi:
                raise ValueError(f"{name}: invalid output_size {list(output_size)} (dim {i} must be between "
                                 f"{lo} and {hi})")
    lead = list(input.shape[:-nd])
    flat_in = input.reshape(lead + [-1])
    flat_idx = indices.reshape(lead + [-1])
    total = math.prod(sizes)
    if flat_idx.numel() and not flat_idx.is_meta and (int(flat_idx.min()) < 0 or int(flat_idx.max()) >= total):
        raise RuntimeError(f"{name}: Found an invalid max index {int(flat_idx.max())} (output volumes are of size "
                           f"{'x'.join(map(str, sizes))})")
    out = G.zeros(lead + [total], dtype=input.dtype, device=input.device)
    return G.scatter(out, -1, flat_idx, flat_in).reshape(lead + sizes)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: IntOrTuple, stride: IntOrTuple | None = None,
                 padding: IntOrTuple = 0, output_size: Any = None) -> Tensor:
    """Undo max_pool1d: each value of `input` goes to its position in `indices` in a zero output (of output_size,
    else the size the pool came from)."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: IntOrTuple, stride: IntOrTuple | None = None,
                 padding: IntOrTuple = 0, output_size: Any = None) -> Tensor:
    """Undo max_pool2d: each value of `input` goes to its position in `indices` in a zero output (of output_size,
    else the size the pool came from)."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: IntOrTuple, stride: IntOrTuple | None = None,
                 padding: IntOrTuple = 0, output_size: Any = None) -> Tensor:
    """Undo max_pool3d: each value of `input` goes to its position in `indices` in a zero output (of output_size,
    else the size the pool came from)."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


def _fractional_starts(samples: np.ndarray, size: int, out: int, k: int, dtype: Any) -> np.ndarray:
    """PyTorch's pseudo-random window starts (..., out) from one uniform sample per plane."""
    u = samples.astype(dtype)
    starts = np.empty(u.shape + (out,), dtype=np.int64)
    if out > 1:
        alpha = dtype(size - k) / dtype(out - 1)
        i = np.arange(out - 1, dtype=dtype)
        starts[..., :-1] = ((i + u[..., None]) * alpha).astype(np.int64) - (u[..., None] * alpha).astype(np.int64)
    starts[..., -1] = size - k
    return starts


def _fractional_max_pool(input: Tensor, kernel_size: IntOrTuple, output_size: Any, output_ratio: Any,
                         return_indices: bool, random_samples: Tensor | None, nd: int) -> Any:
    """Max over windows of size `kernel_size` at pseudo-random starts, one random sequence per plane (taken
    from `_random_samples` (N, C, nd) when given, else drawn): one gather of all windows and a max."""
    name = f"fractional_max_pool{nd}d"
    G = _G()
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D tensor, but got {list(input.shape)}")
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    k = _tuple(kernel_size, nd, "kernel_size")
    sizes = list(x.shape[2:])
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
        ratio = _tuple_float(output_ratio, nd)
        outs = [int(sizes[i] * ratio[i]) for i in range(nd)]
    else:
        outs = list(_tuple(output_size, nd, "output_size"))
    for i in range(nd):
        if outs[i] + k[i] - 1 > sizes[i]:
            raise RuntimeError(f"{name}(): pool size {k[i]} too large relative to input size {sizes[i]} and "
                               f"output size {outs[i]}")
    n, c = x.shape[0], x.shape[1]
    if random_samples is None:
        random_samples = G.rand([n, c, nd], dtype=x.dtype, device=x.device)
    if random_samples.is_meta and not x.is_meta:
        raise RuntimeError(f"{name}: expected _random_samples on the input's device ({x.device}), got meta")
    # on meta the window starts are placeholders: only the output's shape is computed (Note [Meta tensors])
    samples = (np.zeros((n, c, nd)) if random_samples.is_meta
               else random_samples.detach().cpu().numpy().reshape(n, c, nd))
    dtype = np.float32 if x.dtype == G.float32 else np.float64
    # which sample drives which dim, as PyTorch: in 2-D sample 0 is the width's (W, H); in 3-D (T, H, W)
    flat_index = np.zeros((n, c) + (1,) * (2 * nd), dtype=np.int64)
    stride = 1
    for i in reversed(range(nd)):
        which = nd - 1 - i if nd == 2 else i
        starts = _fractional_starts(samples[:, :, which], sizes[i], outs[i], k[i], dtype)
        window = starts[..., None] + np.arange(k[i])  # (n, c, out, k)
        shape = [n, c] + [1] * (2 * nd)
        shape[2 + i], shape[2 + nd + i] = outs[i], k[i]
        flat_index = flat_index + window.reshape(shape) * stride
        stride *= sizes[i]
    total = int(np.prod(outs)) * int(np.prod(k))
    index = G.tensor(flat_index.reshape(n, c, total), dtype=G.int64, device=x.device)
    windows = G.gather(x.reshape([n, c, int(np.prod(sizes))]), 2, index).reshape([n, c] + outs + [int(np.prod(k))])
    values, arg = G.max(windows, -1)
    positions = index.reshape([n, c] + outs + [int(np.prod(k))])
    indices = G.gather(positions, -1, arg.unsqueeze(-1)).squeeze(-1)
    if unbatched:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return (values, indices) if return_indices else values


def _tuple_float(value: Any, n: int) -> tuple[float, ...]:
    if isinstance(value, (int, float)):
        return (float(value),) * n
    out = tuple(float(v) for v in value)
    return out * n if len(out) == 1 else out


def fractional_max_pool2d(input: Tensor, kernel_size: IntOrTuple, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """Max over pseudo-random kernel_size windows of a (N, C, H, W) or (C, H, W) input, to output_size or
    output_ratio times the input size; return_indices also returns the argmax positions."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 2)


def fractional_max_pool3d(input: Tensor, kernel_size: IntOrTuple, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """Max over pseudo-random kernel_size windows of a (N, C, D, H, W) or (C, D, H, W) input, to output_size or
    output_ratio times the input size; return_indices also returns the argmax positions."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 3)
