"""`F.pad`: constant, reflect, replicate and circular padding, built from differentiable ops.

Every mode is a gather along each padded dim: the output position `i` in `range(-left, size + right)` reads the
input at an index that the mode computes from `i` (reflect mirrors about the edges without repeating them,
replicate clamps, circular wraps). One `index_select` per dim, so the gradient (an index_add) comes from the
op's own derivative and the same code runs on every device. A negative amount crops, in every mode. The
constant mode is a crop (`narrow`) and a `cat` with filled blocks instead, so an empty input pads too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import opcall
from runtime.tensor import Tensor

_MODES = ("constant", "reflect", "replicate", "circular")


def _G() -> Any:
    return opcall.api


def _source_index(mode: str, left: int, right: int, size: int) -> np.ndarray:
    """For each output position along a dim, the input position it copies."""
    if mode == "circular":  # a negative amount crops first; the rest wraps around what is left
        start = max(-left, 0)
        kept = size - start - max(-right, 0)
        return np.mod(np.arange(-max(left, 0), kept + max(right, 0)), kept) + start
    i = np.arange(-left, size + right)
    if mode == "replicate":
        return np.clip(i, 0, size - 1)
    i = np.abs(i)  # reflect
    return (size - 1) - np.abs((size - 1) - i)


def _check_modes(input: Tensor, pads: list[int], mode: str) -> None:
    n = len(pads) // 2
    if n > 3:
        raise NotImplementedError(f"F.pad(mode={mode!r}): only the last 1, 2 or 3 dims can be padded, got {n}")
    if input.dim() not in (n + 1, n + 2):
        raise NotImplementedError(f"F.pad(mode={mode!r}): padding {n} dims needs a {n + 1}-D (unbatched) or "
                                  f"{n + 2}-D (batched) input, got {input.dim()}-D")
    for i in range(n):
        d = input.dim() - 1 - i
        size, left, right = input.shape[d], pads[2 * i], pads[2 * i + 1]
        if mode == "reflect" and (left >= size or right >= size):
            raise RuntimeError(f"F.pad(mode='reflect'): padding ({left}, {right}) at dim {d} must be smaller than "
                               f"that dim's size {size}")
        if mode == "circular" and (left > size or right > size):
            raise RuntimeError(f"F.pad(mode='circular'): padding ({left}, {right}) at dim {d} must not exceed that "
                               f"dim's size {size}")
        cropped = size + min(left, 0) + min(right, 0)
        if size == 0 or (mode != "replicate" and cropped <= 0) or size + left + right < 0:
            raise RuntimeError(f"F.pad(mode={mode!r}): dim {d} of size {size} is empty or cropped away by padding "
                               f"({left}, {right})")


def _pad_constant(input: Tensor, pads: list[int], value: float) -> Tensor:
    G = _G()
    out = input
    for i in range(len(pads) // 2):
        d = input.dim() - 1 - i
        left, right = pads[2 * i], pads[2 * i + 1]
        size = out.shape[d]
        start, stop = max(-left, 0), size - max(-right, 0)
        if stop < start:
            raise RuntimeError(f"F.pad: the padding ({left}, {right}) crops dim {d} of size {size} below zero")
        if start or stop != size:
            out = G.narrow(out, d, start, stop - start)
        parts = []
        for amount in (left, right):
            shape = list(out.shape)
            shape[d] = max(amount, 0)
            parts.append(G.full(shape, value, dtype=input.dtype, device=input.device))
        if left > 0 or right > 0:
            out = G.cat([parts[0], out, parts[1]], d)
    return out if out is not input else out.clone()


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last len(pad) // 2 dims, PyTorch's order: (last_left, last_right, 2nd_last_left, ...);
    a negative amount crops."""
    pads = [int(p) for p in pad]
    if len(pads) % 2 or len(pads) // 2 > input.dim():
        raise RuntimeError(f"Padding length must be divisible by 2 and at most twice the number of dimensions of "
                           f"the input, but got padding length {len(pads)} for a {input.dim()}-D input")
    if mode not in _MODES:
        raise NotImplementedError(f"F.pad: unknown padding mode {mode!r} (one of {', '.join(_MODES)})")
    if mode == "constant":
        return _pad_constant(input, pads, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise ValueError(f"F.pad: padding mode {mode!r} doesn't take in value argument")
    _check_modes(input, pads, mode)
    G = _G()
    out = input
    for i in range(len(pads) // 2):
        d = input.dim() - 1 - i
        index = _source_index(mode, pads[2 * i], pads[2 * i + 1], out.shape[d])
        out = G.index_select(out, d, G.tensor(index, dtype=G.int64, device=input.device))
    return out
