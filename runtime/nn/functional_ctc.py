"""`F.ctc_loss`: connectionist temporal classification, the forward (alpha) recursion in log space.

The labels of every sample, extended with blanks (blank, l1, blank, l2, ..., blank), are the states; one step
per time frame updates all samples and states at once from the previous step's same state, the state before and,
where the label differs from the one two before, the state two before (a logsumexp of the three). The gradient
is autograd's through those steps. Unreachable states hold a large negative number instead of -inf, so no NaN
comes back through them.

PyTorch's own backward returns exp(log_probs) - gamma, the gradient with respect to the logits that
log_probs came from through log_softmax, not the plain derivative (-gamma); the two agree after log_softmax's
backward. To give the same gradient for any input, the loss adds the value-neutral term
S - S.detach() with S the sum of exp(log_probs) over each sample's frames.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from runtime import opcall
from runtime.tensor import Tensor

_UNREACHABLE = -1e30


def _G() -> Any:
    return opcall.api


def _lengths(value: Any, n: int, name: str) -> np.ndarray:
    arr = value.detach().cpu().numpy() if isinstance(value, Tensor) else np.asarray(value)
    arr = arr.astype(np.int64).reshape(-1)
    if arr.shape[0] != n:
        raise RuntimeError(f"ctc_loss: {name} must have one entry per batch sample ({n}), got {arr.shape[0]}")
    return arr


def _targets(targets: Tensor, target_lengths: np.ndarray, n: int) -> np.ndarray:
    """The targets as an (N, S_max) array (from padded (N, S) or concatenated 1-D targets)."""
    t = targets.detach().cpu().numpy().astype(np.int64)
    longest = int(target_lengths.max(initial=0))
    if t.ndim == 2:
        if t.shape[0] != n or (longest > t.shape[1]):
            raise RuntimeError(f"ctc_loss: targets of shape {list(t.shape)} don't hold {n} samples of the given "
                               f"target_lengths")
        return t[:, :longest]
    starts = np.concatenate([[0], np.cumsum(target_lengths)[:-1]])
    if target_lengths.sum() > t.shape[0]:
        raise RuntimeError(f"ctc_loss: the target_lengths sum to {int(target_lengths.sum())} but targets hold "
                           f"{t.shape[0]} labels")
    out = np.zeros((n, longest), dtype=np.int64)
    for i in range(n):
        out[i, :target_lengths[i]] = t[starts[i]:starts[i] + target_lengths[i]]
    return out


def _meta_loss(lp: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any, n: int, reduction: str,
               unbatched: bool) -> Tensor:
    """ctc_loss of meta log-probabilities: the loss's shape and dtype, from a reduction of `lp` (so autograd
    records it); the lengths and labels are values a meta tensor does not have (Note [Meta tensors])."""
    for name, value in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        count = value.numel() if isinstance(value, Tensor) else len(np.atleast_1d(np.asarray(value)))
        if count != n:
            raise RuntimeError(f"ctc_loss: {name} must have one entry per batch sample ({n}), got {count}")
    if targets.dim() not in (1, 2 - unbatched):
        raise RuntimeError(f"ctc_loss: targets must be 1-D or {2 - unbatched}-D, got {list(targets.shape)}")
    loss = lp.sum([0, 2])
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The CTC loss of log-probabilities (T, N, C) (or (T, C)) for the given targets; 'mean' divides each
    sample's loss by its target length before averaging."""
    G = _G()
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.dim() == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if lp.dim() != 3:
        raise RuntimeError(f"ctc_loss: log_probs must be (T, N, C) or (T, C), got {list(log_probs.shape)}")
    steps, n, classes = lp.shape
    if not 0 <= blank < classes:
        raise RuntimeError(f"ctc_loss: blank must be in label range [0, {classes}), got {blank}")
    if lp.is_meta:
        return _meta_loss(lp, targets, input_lengths, target_lengths, n, reduction, unbatched)
    in_len = _lengths(input_lengths, n, "input_lengths")
    tgt_len = _lengths(target_lengths, n, "target_lengths")
    if np.any(in_len > steps) or np.any(in_len < 0):
        raise RuntimeError(f"ctc_loss: Expected input_lengths to be in [0, {steps}], got {in_len.tolist()}")
    labels = _targets(targets.unsqueeze(0) if unbatched else targets, tgt_len, n)
    states = 2 * labels.shape[1] + 1
    ext = np.full((n, states), blank, dtype=np.int64)
    ext[:, 1::2] = labels
    skip = np.zeros((n, states), dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    valid = np.arange(states)[None, :] < (2 * tgt_len[:, None] + 1)

    index = G.tensor(ext, dtype=G.int64, device=lp.device).unsqueeze(0).expand([steps, n, states])
    emit = G.gather(lp, 2, index)  # (T, N, S)
    neg = _UNREACHABLE
    start = np.full((n, states), False)
    start[:, 0] = True
    start[:, 1] = tgt_len > 0
    start &= valid
    alpha = G.where(G.tensor(start, device=lp.device), emit[0], neg)
    skip_t = G.tensor(skip, device=lp.device)
    for t in range(1, steps):
        prev1 = G.cat([G.full([n, 1], neg, dtype=lp.dtype, device=lp.device), alpha[:, :-1]], 1)
        prev2 = G.cat([G.full([n, 2], neg, dtype=lp.dtype, device=lp.device), alpha[:, :-2]], 1)
        prev2 = G.where(skip_t, prev2, neg)
        new = G.logsumexp(G.stack([alpha, prev1, prev2]), [0]) + emit[t]
        active = G.tensor((t < in_len)[:, None], device=lp.device)
        alpha = G.where(active, new, alpha)
    last = np.stack([2 * tgt_len, np.maximum(2 * tgt_len - 1, 0)], 1)
    ends = G.gather(alpha, 1, G.tensor(last, dtype=G.int64, device=lp.device))
    ends = G.where(G.tensor(np.stack([np.ones(n, bool), tgt_len > 0], 1), device=lp.device), ends, neg)
    loss = -G.logsumexp(ends, [1])
    loss = G.where(G.tensor(in_len == 0, device=lp.device) & G.tensor(tgt_len > 0, device=lp.device), -neg, loss)
    # PyTorch's gradient convention (see the module note): value 0, gradient exp(log_probs) on used frames
    frames = G.tensor((np.arange(steps)[:, None] < in_len[None, :])[:, :, None], device=lp.device)
    mass = G.where(frames, G.exp(lp), 0).sum([0, 2])
    loss = loss + (mass - mass.detach())
    infinite = loss.detach() > -neg / 2
    if zero_infinity:
        loss = G.where(infinite, 0.0, loss)
    else:
        loss = G.where(infinite, math.inf, loss)
    if reduction == "mean":
        return (loss / G.tensor(np.maximum(tgt_len, 1), dtype=lp.dtype, device=lp.device)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss
