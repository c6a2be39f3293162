"""F.multi_head_attention_forward: multi-head attention from its parameters (what nn.MultiheadAttention calls).

Shapes as PyTorch's: query (L, N, E) or unbatched (L, E), key/value (S, N, E_k/E_v); masks True (bool) where
attention is NOT allowed, or float added to the scores; `attn_mask` (L, S) or (N*num_heads, L, S),
`key_padding_mask` (N, S); `static_k`/`static_v` (N*num_heads, S', head_dim) replace the projected keys and
values; `bias_k`/`bias_v` (1, 1, E) add one key/value position, `add_zero_attn` another (masks padded with
zeros for them). Returns (output (L, N, E), weights (N, L, S) averaged over heads, (N, heads, L, S) with
`average_attn_weights=False`, or None without `need_weights`).
"""

from __future__ import annotations

import math
from typing import Any

from runtime import opcall
from runtime.tensor import Tensor


def _float_mask(mask: Tensor | None, name: str, dtype: Any) -> Tensor | None:
    if mask is None:
        return None
    G = opcall.api
    if mask.dtype is G.bool:
        return G.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, float("-inf"))
    if not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask.to(dtype)


def _pad_last(mask: Tensor | None) -> Tensor | None:
    """One more key position that may be attended to (a zero column)."""
    if mask is None:
        return None
    G = opcall.api
    return G.cat([mask, G.zeros(*mask.shape[:-1], 1, dtype=mask.dtype, device=mask.device)], -1)


def _check_shapes(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                  attn_mask: Tensor | None, num_heads: int) -> bool:
    """Whether the call is batched (query 3-D) or not (2-D); AssertionError for shapes that are neither."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(f"For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {tuple(attn_mask.shape)}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         "tensor")


def _static(t: Tensor, name: str, rows: int, head_dim: int) -> Tensor:
    if t.shape[0] != rows:
        raise AssertionError(f"expecting {name}.size(0) of {rows}, but got {t.shape[0]}")
    if t.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {t.shape[2]}")
    return t


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None, bias_v: Tensor | None,
        add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
        training: bool = True, key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None,
        k_proj_weight: Tensor | None = None, v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention (module docstring): projections, scaled dot products, masks, dropout on the
    weights while training, output projection."""
    G = opcall.api
    linear = G.linear

    batched = _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    L, N, E = query.shape
    S = key.shape[0]
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    key_padding_mask = _float_mask(key_padding_mask, "key_padding_mask", query.dtype)
    if is_causal and key_padding_mask is None and not need_weights:
        # PyTorch drops the mask for its causal kernel: a lower-triangular mask from the top-left corner
        attn_mask = G.ones(L, S, dtype=G.bool, device=query.device).triu(1)
    attn_mask = _float_mask(attn_mask, "attn_mask", query.dtype)
    if E != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {E}")
    head_dim = E // num_heads
    if head_dim * num_heads != E:
        raise AssertionError(f"embed_dim {E} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not match value's "
                                 f"{tuple(value.shape[:2])}")
        for name, w in (("q_proj_weight", q_proj_weight), ("k_proj_weight", k_proj_weight),
                        ("v_proj_weight", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name} is None")
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        w_q, w_k, w_v = G.chunk(in_proj_weight, 3, 0)
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = G.chunk(in_proj_bias, 3, 0)
    q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (L, S):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, but should be "
                                   f"{(L, S)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (N * num_heads, L, S):
                raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, but should be "
                                   f"{(N * num_heads, L, S)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = G.cat([k, bias_k.expand(1, N, bias_k.shape[-1])], 0)
        v = G.cat([v, bias_v.expand(1, N, bias_v.shape[-1])], 0)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must be given together")

    rows = N * num_heads
    q = q.reshape(L, rows, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], rows, head_dim).transpose(0, 1) if static_k is None else \
        _static(static_k, "static_k", rows, head_dim)
    v = v.reshape(v.shape[0], rows, head_dim).transpose(0, 1) if static_v is None else \
        _static(static_v, "static_v", rows, head_dim)
    if add_zero_attn:
        k = G.cat([k, G.zeros(rows, 1, head_dim, dtype=k.dtype, device=k.device)], 1)
        v = G.cat([v, G.zeros(rows, 1, head_dim, dtype=v.dtype, device=v.device)], 1)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    src = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (N, src):
            raise AssertionError(f"expecting key_padding_mask shape of {(N, src)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        kpm = key_padding_mask.reshape(N, 1, 1, src).expand(N, num_heads, 1, src).reshape(rows, 1, src)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    scores = G.bmm(q * math.sqrt(1.0 / head_dim), k.transpose(-2, -1))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = G.softmax(scores, -1)
    if training and dropout_p > 0.0:
        weights = G.dropout(weights, dropout_p, True)
    out = G.bmm(weights, v).transpose(0, 1).reshape(L * N, E)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(L, N, -1)
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(N, num_heads, L, src)
    if average_attn_weights:
        weights = weights.mean(1)
    if not batched:
        weights = weights.squeeze(0)
    return out, weights
