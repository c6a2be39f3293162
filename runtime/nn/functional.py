"""`G.nn.functional` (`F`): the neural-network ops under torch.nn.functional's names and signatures.

The ops are generated from native_functions.yaml; this module re-exports them (`F.relu is G.relu`,
`F.conv2d is G.conv2d`): any name not defined here is looked up in the generated API, so a newly
added op is `F.<name>` without editing this file. The functions below only adapt a call where
torch.nn.functional's signature differs from the ATen schema: `training=`/`inplace=` for dropout,
`F.cross_entropy` for the op `cross_entropy_loss`, keyword order of `nll_loss`, argument order of
`embedding`.
"""

from __future__ import annotations

from typing import Any

from runtime.tensor import Tensor


def _G() -> Any:
    import generated  # runtime/ never imports generated/ at import time
    return generated


def __getattr__(name: str) -> Any:
    if not name.startswith("_"):
        op = getattr(_G(), name, None)
        if op is not None:
            return op
    raise AttributeError(f"G.nn.functional has no function '{name}' (no op of that name in "
                         "native_functions.yaml)")


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the others by 1/(1-p); identity when not training."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    out = _G().dropout(input, p, True)
    return input.copy_(out) if inplace else out


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy between logits `input` (N, C, ...) and class indices or probabilities `target`."""
    return _G().cross_entropy_loss(input, target, weight, reduction=reduction, ignore_index=ignore_index,
                                   label_smoothing=label_smoothing)


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,  # noqa: A002
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of `weight` at the indices `input` (torch.nn.functional's order; the op takes weight first)."""
    if max_norm is not None:
        raise NotImplementedError("F.embedding: max_norm is not supported by opgen")
    if padding_idx is None:
        padding_idx = -1
    else:
        n = weight.shape[0] if weight.dim() else 0
        if not -n <= padding_idx < n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = padding_idx + n if padding_idx < 0 else padding_idx
    return _G().embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    """Negative log likelihood of log-probabilities `input` (N, C, ...) at class indices `target`."""
    return _G().nll_loss(input, target, weight, reduction=reduction, ignore_index=ignore_index)
