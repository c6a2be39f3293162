"""`G.nn.functional` (`F`): the neural-network ops under PyTorch's functional names and signatures.

The ops themselves are generated from native_functions.yaml; this module only re-exports them
(`F.relu is G.relu`) and, where torch.nn.functional's signature differs from the ATen schema
(`training=` for dropout, `reduction="mean"` for the losses), adapts the call. A name that is not
defined here is looked up in the generated API, so a newly added op is available as `F.<name>`
without editing this file. The few compositions below (`linear`, `dropout`, `flatten`) are used
only until the runtime has that op.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime.tensor import Tensor

# Ops re-exported under their own name (looked up lazily: runtime/ never imports generated/ at import).
_REEXPORTS = frozenset({
    "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "selu", "celu", "gelu", "silu", "mish",
    "hardtanh", "hardswish", "hardsigmoid", "softplus", "softsign", "logsigmoid", "tanhshrink", "sigmoid",
    "tanh", "softmax", "log_softmax", "softmin", "conv1d", "conv2d", "conv_transpose2d", "max_pool1d",
    "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "pad",
    "one_hot", "cosine_similarity", "pairwise_distance", "embedding", "layer_norm", "batch_norm",
    "group_norm", "normalize", "unfold", "fold", "interpolate", "pixel_shuffle", "threshold",
})

_REDUCTIONS = ("none", "mean", "sum")


def _G() -> Any:
    import generated
    return generated


def __getattr__(name: str) -> Any:
    G = _G()
    if name in _REEXPORTS or (not name.startswith("_") and hasattr(G, name)):
        try:
            return getattr(G, name)
        except AttributeError:
            pass
    raise AttributeError(f"G.nn.functional has no function '{name}' (no op of that name in "
                         "native_functions.yaml yet)")


def __dir__() -> list[str]:
    return sorted(set(globals()) | {n for n in _REEXPORTS if hasattr(_G(), n)})


def _op(name: str) -> Any:
    """The generated op `name`, or None while it has not landed."""
    return getattr(_G(), name, None)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = input @ weight.T + bias."""
    fn = _op("linear")
    if fn is not None:
        return fn(input, weight, bias)
    out = input.matmul(weight.t())
    return out if bias is None else out.add(bias)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the others by 1/(1-p) (identity when not training)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    fn = _op("dropout_" if inplace else "dropout")
    if fn is not None:
        return fn(input, p, True)
    G = _G()
    if p == 1.0:
        return input.mul(0)
    from runtime.nn import init
    keep = init._host_random("uniform", tuple(input.shape)) >= p
    mask = G.tensor(keep.astype(np.float32) / (1.0 - p), dtype=input.dtype, device=input.device)
    return input.mul_(mask) if inplace else input.mul(mask)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims start_dim..end_dim into one."""
    fn = _op("flatten")
    if fn is not None:
        return fn(input, start_dim, end_dim)
    shape = list(input.shape)
    nd = len(shape)
    start, end = start_dim % max(nd, 1), end_dim % max(nd, 1)
    if nd == 0 or start >= end:
        return input.reshape(shape or [1])
    merged = int(np.prod(shape[start:end + 1]))
    return input.reshape(shape[:start] + [merged] + shape[end + 1:])


def _reduction(reduction: str) -> str:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction (expected one of "
                         f"{', '.join(_REDUCTIONS)})")
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    total = loss.sum()
    return total if reduction == "sum" else total.div(max(loss.numel(), 1))


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean (or sum, or none) of (input - target)^2."""
    fn = _op("mse_loss")
    if fn is not None:
        return fn(input, target, reduction=_reduction(reduction))
    diff = input.sub(target)
    return _reduce(diff.mul(diff), _reduction(reduction))


def _log_softmax_rows(input: Tensor) -> Tensor:
    """log_softmax over dim 1, from pointwise ops: the row max is subtracted as a constant (the result
    does not depend on it, so neither does the gradient)."""
    G = _G()
    fn = _op("log_softmax")
    if fn is not None:
        return fn(input, 1)
    shift = G.tensor(input.detach().numpy(force=True).max(axis=1, keepdims=True), dtype=input.dtype,
                     device=input.device)
    z = input.sub(shift)
    return z.sub(z.exp().sum(1, keepdim=True).log())


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy of logits `input` (N, C) against class indices `target` (N,), as PyTorch's."""
    reduction = _reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0, got {label_smoothing}")
    fn = _op("cross_entropy_loss")
    if fn is not None:
        return fn(input, target, weight, reduction=reduction, ignore_index=ignore_index,
                  label_smoothing=label_smoothing)
    return _cross_entropy_composite(input, target, weight, ignore_index, reduction, label_smoothing)


def _cross_entropy_composite(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int,
                             reduction: str, label_smoothing: float) -> Tensor:
    """cross_entropy from log, exp, mul and sum, until the op lands (2-D input, class-index targets)."""
    G = _G()
    if input.dim() != 2:
        raise NotImplementedError("cross_entropy without the cross_entropy op supports (N, C) input only")
    n, c = input.shape
    labels = np.asarray(target.numpy(force=True)).astype(np.int64).reshape(-1)
    if labels.shape != (n,):
        raise ValueError(f"Expected target of shape ({n},), got {list(target.shape)}")
    keep = labels != ignore_index
    if np.any((labels[keep] < 0) | (labels[keep] >= c)):
        raise IndexError(f"Target {labels[keep & ((labels < 0) | (labels >= c))][0]} is out of bounds.")
    class_w = np.ones(c) if weight is None else np.asarray(weight.numpy(force=True), dtype=np.float64)
    onehot = np.zeros((n, c))
    onehot[np.arange(n)[keep], labels[keep]] = 1.0
    sample_w = np.where(keep, class_w[np.where(keep, labels, 0)], 0.0)
    coef = (1.0 - label_smoothing) * onehot * sample_w[:, None]
    if label_smoothing:
        coef = coef + (label_smoothing / c) * keep[:, None] * class_w[None, :]
    logp = _log_softmax_rows(input)
    losses = logp.mul(G.tensor(-coef, dtype=input.dtype, device=input.device)).sum(1)
    if reduction == "none":
        return losses
    total = losses.sum()
    return total if reduction == "sum" else total.div(float(sample_w.sum()))
