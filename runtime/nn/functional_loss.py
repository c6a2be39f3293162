"""Losses and distances of torch.nn.functional built from the ops (their gradients are the ops'): margin,
embedding, multi-label, Gaussian/Poisson likelihood and triplet losses, `pdist`."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime import opcall
from runtime.tensor import Tensor


def _G() -> Any:
    return opcall.api


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return ("mean" if size_average else "sum") if reduce else "none"


def _value_clamp_min(t: Tensor, low: float) -> Tensor:
    """max(t, low) in value, with the gradient of t itself (PyTorch clamps under no_grad here)."""
    return t + (t.clamp_min(low) - t).detach()


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, -target * (input1 - input2) + margin)."""
    if not (input1.dim() == input2.dim() == target.dim()):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {list(input1.shape)}, input2: {list(input2.shape)}, target: "
                           f"{list(target.shape)} ")
    loss = (-target * (input1 - input2) + margin).clamp_min(0)
    return _reduce(loss, _legacy(size_average, reduce, reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """x where target is 1, max(0, margin - x) where target is -1."""
    G = _G()
    margin_part = G.where(target != 1, (margin - input).clamp_min(0), 0)
    self_part = G.where(target != -1, input, 0)
    return _reduce(margin_part + self_part, _legacy(size_average, reduce, reduction))


def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input))."""
    return _reduce(_G().log1p(_G().exp(-target * input)), _legacy(size_average, reduce, reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1 (over the last dim)."""
    if input1.dim() not in (1, 2) or input1.dim() != input2.dim() or target.dim() != input1.dim() - 1:
        raise RuntimeError(f"cosine_embedding_loss: expected 1-D or 2-D inputs of the same rank and a target of one "
                           f"dim fewer, got {list(input1.shape)}, {list(input2.shape)}, {list(target.shape)}")
    G = _G()
    eps = 1e-12
    dot = (input1 * input2).sum(-1)
    mag1 = (input1 * input1).sum(-1) + eps
    mag2 = (input2 * input2).sum(-1) + eps
    cos = dot / G.sqrt(mag1 * mag2)
    loss = G.where(target == 1, 1 - cos, 0) + G.where(target == -1, (cos - margin).clamp_min(0), 0)
    return _reduce(loss, _legacy(size_average, reduce, reduction))


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    """-(y log sigmoid(x) + (1 - y) log sigmoid(-x)), averaged over the classes (last dim)."""
    G = _G()
    loss = -(target * G.log_sigmoid(input) + (1 - target) * G.log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.dim() - 1) / input.shape[-1] if input.dim() else loss
    return _reduce(loss, _legacy(size_average, reduce, reduction))


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average: bool | None = None, reduce: bool | None = None,
                      reduction: str = "mean") -> Tensor:
    """sum over classes j != y of max(0, margin - x[y] + x[j]) ** p (times weight[y]), over the class count."""
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if input.dim() > 2 or target.dim() > 1 or (input.dim() == 2 and target.shape[0] != input.shape[0]):
        raise RuntimeError(f"multi_margin_loss: expected input (N, C) or (C,) and target (N,) or (), got "
                           f"{list(input.shape)} and {list(target.shape)}")
    G = _G()
    x = input.reshape([1, input.numel()]) if input.dim() < 2 else input
    t = target.reshape([-1, 1])
    c = x.shape[1]
    picked = G.gather(x, 1, t)
    z = (margin - picked + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * G.index_select(weight, 0, t.reshape([-1])).unsqueeze(1)
    is_target = G.arange(c, device=x.device).unsqueeze(0) == t
    loss = G.where(is_target, 0, z).sum(1) / c
    if input.dim() < 2:
        loss = loss.reshape([])
    return _reduce(loss, _legacy(size_average, reduce, reduction))


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """For each sample: sum over its target classes j (those before the first -1 of `target`) and the
    non-target classes k of max(0, 1 - (x[j] - x[k])), over the class count."""
    if input.dim() > 2 or tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"multilabel_margin_loss: expected input (N, C) or (C,) and a target of the same shape, "
                           f"got {list(input.shape)} and {list(target.shape)}")
    G = _G()
    x = input.reshape([1, input.numel()]) if input.dim() < 2 else input
    n, c = x.shape
    counts = np.zeros((n, c))  # how often each class is a target of each sample
    labelled = range(n)
    if target.is_meta or x.is_meta:  # the labels are values: the loss's shape only (Note [Meta tensors])
        if not (target.is_meta and x.is_meta):
            raise RuntimeError(f"multilabel_margin_loss: expected input and target on one device, got "
                               f"{input.device} and {target.device}")
        labelled = range(0)
    else:
        t = target.detach().cpu().numpy().reshape(x.shape)
    for row in labelled:  # one pass over each sample's target list (small), not over elements of x
        stops = np.nonzero(t[row] < 0)[0]
        labels = t[row, :stops[0]] if len(stops) else t[row]
        if len(labels) and (labels.min() < 0 or labels.max() >= c):
            raise RuntimeError(f"multilabel_margin_loss: target index out of range [0, {c}): {labels.tolist()}")
        np.add.at(counts[row], labels, 1.0)
    is_target = counts > 0
    pair = counts[:, :, None] * (~is_target)[:, None, :]  # (n, j, k)
    margins = (1 - x.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)
    loss = (margins * G.tensor(pair, dtype=x.dtype, device=x.device)).sum([1, 2]) / c
    if input.dim() < 2:
        loss = loss.reshape([])
    return _reduce(loss, _legacy(size_average, reduce, reduction))


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """0.5 * (log(max(var, eps)) + (input - target)^2 / max(var, eps)) (+ 0.5 log(2 pi) when full)."""
    G = _G()
    if not isinstance(var, Tensor):
        var = G.full(list(input.shape), float(var), dtype=input.dtype, device=input.device)
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if bool((var.detach() < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = _value_clamp_min(var, eps)
    loss = 0.5 * (G.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    """exp(input) - target * input (log_input) or input - target * log(input + eps); `full` adds Stirling's
    approximation of log(target!) where target > 1."""
    G = _G()
    if log_input:
        loss = G.exp(input) - target * input
    else:
        loss = input - target * G.log(input + eps)
    if full:
        safe = G.where(target > 1, target, 1.0)
        stirling = safe * G.log(safe) - safe + 0.5 * G.log(2 * math.pi * safe)
        loss = loss + G.where(target > 1, stirling, 0.0)
    return _reduce(loss, _legacy(size_average, reduce, reduction))


def _check_triplet(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1 or dims[0] not in (1, 2):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions (1 or 2), but got: anchor {dims[0]}D, positive {dims[1]}D, and negative "
                           f"{dims[2]}D inputs")


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: bool | None = None,
                        reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm pairwise distance."""
    _check_triplet(anchor, positive, negative)
    G = _G()
    d_pos = G.pairwise_distance(anchor, positive, p, eps)
    d_neg = G.pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = G.minimum(d_neg, G.pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), _legacy(size_average, reduce, reduction))


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """triplet_margin_loss with any distance (pairwise_distance by default)."""
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: expected margin to be greater than 0, got {margin} "
                         f"instead")
    _check_triplet(anchor, positive, negative)
    G = _G()
    dist = distance_function if distance_function is not None else G.pairwise_distance
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_neg = G.minimum(d_neg, dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distances between every pair of rows i < j of an (N, M) input, in row-major pair order."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    G = _G()
    i, j = np.triu_indices(input.shape[0], 1)
    left = G.index_select(input, 0, G.tensor(i, dtype=G.int64, device=input.device))
    right = G.index_select(input, 0, G.tensor(j, dtype=G.int64, device=input.device))
    return G.linalg_vector_norm(left - right, p, [1])
