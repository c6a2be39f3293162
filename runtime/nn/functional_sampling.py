"""Resampling: `F.interpolate` (and the `upsample*` aliases), `pixel_shuffle`/`pixel_unshuffle`,
`affine_grid` and `grid_sample`.

Note [Interpolation as taps per dim]: every mode but 'area' is separable. For each resized dim, a mode gives
each output position a few taps, (input index, weight) pairs, computed by NumPy from the sizes alone:
nearest one tap of weight 1, linear two, cubic four (Keys' kernel with a = -0.75, indices clamped at the
borders). The dim is resized as the sum over taps of `index_select(x, dim, index) * weight`, so the result and
its gradient are those of whole-tensor ops, on every device. 'area' is adaptive average pooling. The source
coordinate follows PyTorch: with align_corners, `i * (in - 1) / (out - 1)`; otherwise `(i + 0.5) * scale - 0.5`
(clamped at 0 for linear) with scale `1 / scale_factor` when a factor was given and not recomputed, else
`in / out`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import opcall
from runtime.nn.functional_pool import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
from runtime.tensor import Tensor

Taps = list[tuple[np.ndarray, np.ndarray]]

_LINEAR_MODES = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area")


def _G() -> Any:
    return opcall.api


def _source_scale(size: int, out: int, align_corners: bool, scale: float | None) -> float:
    if align_corners:
        return (size - 1) / (out - 1) if out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else size / out


def _nearest_taps(size: int, out: int, scale: float | None, exact: bool) -> Taps:
    s = 1.0 / scale if scale is not None and scale > 0 else size / out
    offset = 0.5 if exact else 0.0
    # PyTorch computes the nearest source index in float32 (it decides ties such as 3 * (1/3))
    position = (np.arange(out, dtype=np.float32) + np.float32(offset)) * np.float32(s)
    index = np.minimum(np.floor(position).astype(np.int64), size - 1)
    return [(index, np.ones(out))]


def _coordinates(size: int, out: int, align_corners: bool, scale: float | None, cubic: bool) -> np.ndarray:
    s = _source_scale(size, out, align_corners, scale)
    i = np.arange(out, dtype=np.float64)
    if align_corners:
        return i * s
    src = (i + 0.5) * s - 0.5
    return src if cubic else np.maximum(src, 0.0)


def _linear_taps(size: int, out: int, align_corners: bool, scale: float | None) -> Taps:
    src = _coordinates(size, out, align_corners, scale, False)
    i0 = np.minimum(np.floor(src).astype(np.int64), size - 1)
    i1 = np.minimum(i0 + 1, size - 1)
    frac = src - i0
    return [(i0, 1.0 - frac), (i1, frac)]


def _cubic_weights(t: np.ndarray) -> list[np.ndarray]:
    a = -0.75

    def near(x: np.ndarray) -> np.ndarray:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _cubic_taps(size: int, out: int, align_corners: bool, scale: float | None) -> Taps:
    src = _coordinates(size, out, align_corners, scale, True)
    base = np.floor(src).astype(np.int64)
    weights = _cubic_weights(src - base)
    return [(np.clip(base - 1 + k, 0, size - 1), weights[k]) for k in range(4)]


def _resample(x: Tensor, dim: int, taps: Taps) -> Tensor:
    G = _G()
    out = None
    shape = [1] * x.dim()
    shape[dim] = -1
    for index, weight in taps:
        picked = G.index_select(x, dim, G.tensor(index, dtype=G.int64, device=x.device))
        if np.all(weight == 1.0):
            term = picked
        else:
            term = picked * G.tensor(weight.reshape(shape), dtype=x.dtype, device=x.device)
        out = term if out is None else out + term
    assert out is not None
    return out


def _output_sizes(input: Tensor, nd: int, size: Any, scale_factor: Any,
                  recompute_scale_factor: bool | None) -> tuple[list[int], list[float | None]]:
    spatial = list(input.shape[2:])
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined" if size is not None else
                         "either size or scale_factor should be defined")
    if size is not None:
        sizes = [int(size)] * nd if isinstance(size, int) else [int(v) for v in size]
        if len(sizes) != nd:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {spatial} and output size of {sizes}. Please provide input "
                             f"tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        return sizes, [None] * nd
    factors = [float(scale_factor)] * nd if isinstance(scale_factor, (int, float)) else \
        [float(v) for v in scale_factor]
    if len(factors) != nd:
        raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                         f"with spatial dimensions of {spatial} and scale_factor of shape {factors}. Please provide "
                         f"input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                         f"format.")
    sizes = [int(math.floor(float(np.float64(s) * f))) for s, f in zip(spatial, factors, strict=True)]
    return sizes, ([None] * nd if recompute_scale_factor else list(factors))


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims (all but the first two) of a 3-D, 4-D or 5-D input."""
    if mode not in _MODES:
        raise NotImplementedError(f"interpolate: unknown mode {mode!r} (one of {', '.join(_MODES)})")
    if antialias and (mode != "bilinear" or input.dim() != 4):
        raise NotImplementedError("interpolate: antialias=True is supported for mode='bilinear' on 4-D inputs "
                                  "(PyTorch also has bicubic)")
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear "
                             "| bicubic | trilinear")
    nd = input.dim() - 2
    if nd not in (1, 2, 3):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    if mode in _LINEAR_MODES and _LINEAR_MODES[mode] != nd:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_LINEAR_MODES[mode] + 2}D input")
    sizes, scales = _output_sizes(input, nd, size, scale_factor, recompute_scale_factor)
    if any(s <= 0 for s in sizes):
        raise RuntimeError(f"interpolate: the output size {sizes} must be greater than 0")
    if antialias:  # aten's antialiased bilinear op (runtime/kernels/aten_composites.py)
        return _G()._upsample_bilinear2d_aa(input, sizes, bool(align_corners), scales[0], scales[1])
    if mode == "area":
        pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[nd - 1]
        return pool(input, sizes)
    corners = bool(align_corners)
    x = input
    for i in range(nd):
        dim, n, out = 2 + i, input.shape[2 + i], sizes[i]
        if mode == "nearest":
            taps = _nearest_taps(n, out, scales[i], False)
        elif mode == "nearest-exact":
            taps = _nearest_taps(n, out, scales[i], True)
        elif mode == "bicubic":
            taps = _cubic_taps(n, out, corners, scales[i])
        else:
            taps = _linear_taps(n, out, corners, scales[i])
        x = _resample(x, dim, taps)
    return x


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """The older name of interpolate (without recompute_scale_factor)."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """interpolate(input, size, scale_factor, mode="nearest")."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r)."""
    r = int(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    n = len(lead)
    x = input.reshape(lead + [c // (r * r), r, r, h, w])
    x = x.permute(list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2])
    return x.reshape(lead + [c // (r * r), h * r, w * r])


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W)."""
    r = int(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, but got "
                           f"{h} and {w} for downscale_factor={r}")
    n = len(lead)
    x = input.reshape(lead + [c, h // r, r, w // r, r])
    x = x.permute(list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3])
    return x.reshape(lead + [c * r * r, h // r, w // r])


def _base_coords(n: int, align_corners: bool) -> np.ndarray:
    if n <= 1:
        return np.zeros(max(n, 0))
    lin = np.linspace(-1.0, 1.0, n)
    return lin if align_corners else lin * (n - 1) / n


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """Sampling grids (N, H, W, 2) or (N, D, H, W, 3) of the affine maps `theta` (N, 2, 3) or (N, 3, 4)."""
    G = _G()
    corners = bool(align_corners)
    size = [int(v) for v in size]
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    spatial = size[2:]
    nd = len(spatial)
    if nd not in (2, 3) or tuple(theta.shape) != (size[0], nd, nd + 1):
        raise ValueError(f"Expected a batch of {nd}D affine matrices of shape Nx{nd}x{nd + 1} for size {size}. Got "
                         f"{list(theta.shape)}.")
    if min(spatial) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    axes = [_base_coords(n, corners) for n in reversed(spatial)]  # x (width) first
    mesh = np.meshgrid(*axes[::-1], indexing="ij")[::-1]
    base = np.stack(list(mesh) + [np.ones(spatial)], axis=-1).reshape(-1, nd + 1)
    grid = G.matmul(G.tensor(base, dtype=theta.dtype, device=theta.device), theta.transpose(1, 2))
    return grid.reshape([size[0]] + spatial + [nd])


# grid_sample's modes and padding modes with the enum values of PyTorch's kernels (F.GRID_SAMPLE_*)
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}
_PAD_MODES = tuple(GRID_SAMPLE_PADDING_MODES)


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord: Tensor, twice_low: float, twice_high: float) -> Tensor:
    """Reflect coordinates into [twice_low / 2, twice_high / 2] (the bounds are given doubled, as PyTorch's)."""
    G = _G()
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    if span <= 0:
        return G.zeros_like(coord)
    c = (coord - low).abs()
    flips = G.floor(c / span)
    extra = c - flips * span
    return G.where(G.remainder(flips, 2) == 0, extra + low, span - extra + low)


def _source_coord(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    c = _unnormalize(coord, size, align_corners)
    if padding_mode == "border":
        c = c.clamp(0, size - 1)
    elif padding_mode == "reflection":
        c = _reflect(c, 0.0, 2.0 * (size - 1)) if align_corners else _reflect(c, -1.0, 2.0 * size - 1)
        c = c.clamp(0, size - 1)
    return c


def _pad_tap(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """A bicubic tap's coordinate under the padding mode (PyTorch applies it to each tap)."""
    if padding_mode == "border":
        return coord.clamp(0, size - 1)
    if padding_mode == "reflection":
        c = _reflect(coord, 0.0, 2.0 * (size - 1)) if align_corners else _reflect(coord, -1.0, 2.0 * size - 1)
        return c.clamp(0, size - 1)
    return coord


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Sample the input (N, C, H, W) or (N, C, D, H, W) at the grid's points (x, y[, z]) in [-1, 1]:
    bilinear (trilinear in 3-D), nearest, or bicubic (4-D)."""
    G = _G()
    if mode not in GRID_SAMPLE_INTERPOLATION_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in _PAD_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    nd = input.dim() - 2
    if nd not in (2, 3) or grid.dim() != nd + 2 or grid.shape[-1] != nd or grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sample(): expected a 4-D or 5-D input and a grid (N, *out, {nd}) of the same N and "
                           f"rank, got input {list(input.shape)} and grid {list(grid.shape)}")
    if mode == "bicubic" and nd != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    corners = bool(align_corners)
    n, c = input.shape[0], input.shape[1]
    sizes = list(input.shape[2:])[::-1]  # (W, H[, D]): the order of the grid's coordinates
    out_shape = list(grid.shape[1:-1])
    points = math.prod(out_shape)
    flat = input.reshape([n, c, math.prod(input.shape[2:])])

    def pick(coords: list[Tensor]) -> Tensor:
        """input at integer points (one coordinate tensor per dim, x first), zero outside."""
        inside: Any = None
        index: Any = None
        stride = 1
        for coord, size in zip(coords, sizes, strict=True):
            ok = (coord >= 0) & (coord <= size - 1)
            inside = ok if inside is None else inside & ok
            term = coord.clamp(0, size - 1) * stride
            index = term if index is None else index + term
            stride *= size
        index = index.to(G.int64).reshape([n, 1, points]).expand([n, c, points])
        values = G.gather(flat, 2, index).reshape([n, c] + out_shape)
        return G.where(inside.unsqueeze(1), values, 0.0)

    raw = [grid[..., i] for i in range(nd)]
    if mode == "bicubic":
        x, y = (_unnormalize(raw[i], sizes[i], corners) for i in range(2))
        x0, y0 = G.floor(x).detach(), G.floor(y).detach()
        wx, wy = _cubic_tensor_weights(x - x0), _cubic_tensor_weights(y - y0)
        out = None
        for j in range(4):
            ty = _pad_tap(y0 + (j - 1), sizes[1], padding_mode, corners)
            row = None
            for i in range(4):
                tx = _pad_tap(x0 + (i - 1), sizes[0], padding_mode, corners)
                term = pick([tx, ty]) * wx[i].unsqueeze(1)
                row = term if row is None else row + term
            term = row * wy[j].unsqueeze(1)
            out = term if out is None else out + term
        return out
    coords = [_source_coord(raw[i], sizes[i], padding_mode, corners) for i in range(nd)]
    if mode == "nearest":
        # the grid gets a zero gradient, as PyTorch's (not none)
        zero = sum(coords[1:], coords[0]) * 0
        return pick([G.round(v).detach() for v in coords]) + zero.unsqueeze(1)
    lows = [G.floor(v).detach() for v in coords]
    fracs = [(v - lo).unsqueeze(1) for v, lo in zip(coords, lows, strict=True)]
    out = None
    for corner in range(2 ** nd):
        bits = [(corner >> i) & 1 for i in range(nd)]
        weight = None
        for bit, f in zip(bits, fracs, strict=True):
            w = f if bit else 1 - f
            weight = w if weight is None else weight * w
        term = pick([lo + bit for lo, bit in zip(lows, bits, strict=True)]) * weight
        out = term if out is None else out + term
    return out


def _cubic_tensor_weights(t: Tensor) -> list[Tensor]:
    """Keys' cubic convolution weights (a = -0.75) of the 4 taps around a fractional offset t, as tensors."""
    a = -0.75

    def near(x: Tensor) -> Tensor:
        return ((x * (a + 2) - (a + 3)) * x) * x + 1

    def far(x: Tensor) -> Tensor:
        return ((x * a - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]
