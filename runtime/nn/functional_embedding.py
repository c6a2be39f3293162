"""`F.embedding_bag`: sums, means or maxima of bags of embedding rows, as one gather of a padded (bags,
longest bag) index table and a masked reduction (the table is built by NumPy from the offsets)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from runtime import opcall
from runtime.autograd.grad_mode import no_grad
from runtime.tensor import Tensor


def _G() -> Any:
    return opcall.api


def _embedding_renorm_(weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    """Scale, in place and untracked, the rows of `weight` used by `input` whose norm exceeds max_norm."""
    if weight.is_meta or input.is_meta:
        return  # which rows to scale is a matter of values (Note [Meta tensors] in runtime/meta_array.py)
    G = _G()
    rows = G.tensor(np.unique(input.detach().cpu().numpy().reshape(-1)), dtype=G.int64, device=weight.device)
    with no_grad():
        picked = G.index_select(weight, 0, rows)
        norms = G.linalg_vector_norm(picked, norm_type, [1], True)
        scale = G.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight[rows] = picked * scale


def _bag_table(input: np.ndarray, offsets: np.ndarray | None, include_last_offset: bool) -> tuple[np.ndarray,
                                                                                                   np.ndarray]:
    """(position into the flat input, valid) per (bag, slot)."""
    if input.ndim == 2:
        b, length = input.shape
        return np.arange(b * length).reshape(b, length), np.ones((b, length), dtype=bool)
    n = input.shape[0]
    starts = offsets.astype(np.int64)
    if len(starts) and starts[0] != 0:
        raise ValueError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                         f"position 0. However, got {int(starts[0])}")
    ends = np.append(starts[1:], n)
    if include_last_offset:
        starts, ends = starts[:-1], starts[1:].copy()
        ends[-1:] = np.minimum(ends[-1:], n)
    if len(starts) and (np.any(ends < starts) or starts.max(initial=0) > n):
        raise ValueError(f"embedding_bag: offsets must be non-decreasing and at most the input length {n}")
    longest = int((ends - starts).max(initial=0))
    slots = starts[:, None] + np.arange(longest)[None, :]
    return np.minimum(slots, max(n - 1, 0)), slots < ends[:, None]


def _meta_bags(input: Tensor, weight: Tensor, offsets: Tensor | None, include_last_offset: bool,
               per_sample_weights: Tensor | None) -> Tensor:
    """embedding_bag with a meta weight (indices on meta or the CPU): which rows fill a bag is a matter of
    values, the result is (bags, dim) in weight's dtype (Note [Meta tensors] in runtime/meta_array.py). It
    comes from ops on `weight` (and the sample weights), so autograd records it as on a device with data."""
    G = _G()
    if not weight.is_meta:
        raise RuntimeError(f"embedding_bag: expected the indices on weight's device ({weight.device}), got them "
                           f"on meta")
    if input.dim() == 2:
        bags = input.shape[0]
    else:
        bags = max(offsets.shape[0] - 1, 0) if include_last_offset else offsets.shape[0]
    pick = G.zeros(bags, dtype=G.int64, device="meta")
    out = G.index_select(weight, 0, pick)
    if per_sample_weights is not None:
        out = out * G.index_select(per_sample_weights.reshape([-1]), 0, pick).unsqueeze(1).to(weight.dtype)
    return out


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Reduce (sum, mean or max) the rows of `weight` picked by each bag of `input`: the rows of a 2-D input,
    or the slices of a 1-D input that `offsets` start."""
    G = _G()
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode}")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences.")
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                      f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                      f"on GitHub.")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) is not None, "
                             f"then it must have the same shape as the input ({list(input.shape)})")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError("padding_idx must be within num_embeddings")
        padding_idx = padding_idx % num
    if input.is_meta or weight.is_meta or (offsets is not None and offsets.is_meta):
        return _meta_bags(input, weight, offsets, include_last_offset, per_sample_weights)
    idx = input.detach().cpu().numpy().astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        raise IndexError(f"embedding_bag: index out of range in self (indices must be in [0, {num}))")
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    off = None if offsets is None else offsets.detach().cpu().numpy()
    slots, valid = _bag_table(idx, off, include_last_offset)
    flat = idx.reshape(-1)
    if padding_idx is not None and flat.size:
        valid = valid & (flat[slots] != padding_idx)
    bags, longest = slots.shape
    dim = weight.shape[1]
    if longest == 0 or flat.size == 0:
        return G.zeros([bags, dim], dtype=weight.dtype, device=weight.device)
    rows = G.tensor(flat[slots].reshape(-1), dtype=G.int64, device=weight.device)
    picked = G.index_select(weight, 0, rows).reshape([bags, longest, dim])
    mask = G.tensor(valid[:, :, None], device=weight.device)
    if mode == "max":
        low = -math.inf if weight.dtype.is_floating_point else int(np.iinfo(np.dtype(weight.dtype.name)).min)
        out = G.max(G.where(mask, picked, low), 1)[0]
        return G.where(G.tensor(valid.any(1)[:, None], device=weight.device), out, 0)
    if per_sample_weights is not None:
        psw = per_sample_weights.reshape([-1])
        picked = picked * G.index_select(psw, 0, G.tensor(slots.reshape(-1), dtype=G.int64,
                                                          device=weight.device)).reshape([bags, longest, 1])
    total = G.where(mask, picked, 0).sum(1)
    if mode == "sum":
        return total
    counts = valid.sum(1, keepdims=True)
    return total / G.tensor(np.maximum(counts, 1), dtype=weight.dtype, device=weight.device)
