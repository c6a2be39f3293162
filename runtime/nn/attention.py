"""`nn.MultiheadAttention` (torch.nn's parameters, masks and returns).

Parameters as PyTorch: `in_proj_weight` (3E, E, xavier-uniform) and `in_proj_bias` (zeros) when key and
value have the query's size, else `q_proj_weight`/`k_proj_weight`/`v_proj_weight`; `out_proj` a Linear
with a zero bias. Masks: a bool `attn_mask` or `key_padding_mask` is True where attention is NOT allowed
(the opposite of F.scaled_dot_product_attention's bool mask); a float mask is added to the scores.
"""

from __future__ import annotations

import math
from typing import Any

import runtime.nn.functional as F
import runtime.nn.init as init
from runtime import opcall
from runtime.nn.layers import Linear
from runtime.nn.module import Module
from runtime.nn.parameter import Parameter
from runtime.tensor import Tensor


def _G() -> Any:
    return opcall.api


class NonDynamicallyQuantizableLinear(Linear):
    """The output projection of MultiheadAttention (a Linear under PyTorch's class name, for its repr)."""


def _as_float_mask(mask: Tensor | None, dtype: Any) -> Tensor | None:
    if mask is None:
        return None
    G = _G()
    if mask.dtype is G.bool:
        return G.masked_fill(G.zeros(mask.shape, dtype=dtype, device=mask.device), mask, float("-inf"))
    return mask.to(dtype)


def _pad_keys(mask: Tensor | None, extra: int) -> Tensor | None:
    """A float mask with `extra` zero columns after its last (the keys added by bias_kv / zero_attn may be
    attended to)."""
    if mask is None or extra == 0:
        return mask
    G = _G()
    return G.cat([mask, G.zeros(*mask.shape[:-1], extra, dtype=mask.dtype, device=mask.device)], -1)


class MultiheadAttention(Module):
    """Multi-head scaled dot-product attention with input and output projections; returns (output, weights)."""
    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        G = _G()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        kw = {"device": device, "dtype": dtype}
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(G.empty(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(G.empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(G.empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(G.empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(G.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(G.empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(G.empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
                need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        G = _G()
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                               "module method `generate_square_subsequent_mask` to create this mask.")
        batched = query.dim() == 3
        if query.dim() not in (2, 3):
            raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D "
                                 "query tensor")
        if not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        L, N, E = query.shape
        S = key.shape[0]
        if E != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but got {E}")
        h, d = self.num_heads, self.head_dim
        if self._qkv_same_embed_dim:
            w_q, w_k, w_v = G.chunk(self.in_proj_weight, 3, 0)
        else:
            w_q, w_k, w_v = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        b_q = b_k = b_v = None
        if self.in_proj_bias is not None:
            b_q, b_k, b_v = G.chunk(self.in_proj_bias, 3, 0)
        k_in, v_in = F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)          # (S, N, E)
        extra = 0  # key positions added after the inputs': bias_k/bias_v, then a zero key/value
        if self.bias_k is not None:
            k_in = G.cat([k_in, self.bias_k.expand(1, N, E)], 0)
            v_in = G.cat([v_in, self.bias_v.expand(1, N, E)], 0)
            extra += 1
        # (L, N, E) -> (N, h, L, d)
        q = F.linear(query, w_q, b_q).reshape(L, N * h, d).transpose(0, 1).reshape(N, h, L, d)
        k = k_in.reshape(S + extra, N * h, d).transpose(0, 1).reshape(N, h, S + extra, d)
        v = v_in.reshape(S + extra, N * h, d).transpose(0, 1).reshape(N, h, S + extra, d)
        if self.add_zero_attn:
            k = G.cat([k, G.zeros(N, h, 1, d, dtype=k.dtype, device=k.device)], 2)
            v = G.cat([v, G.zeros(N, h, 1, d, dtype=v.dtype, device=v.device)], 2)
            extra += 1
        scores = G.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(d))
        mask = _pad_keys(_as_float_mask(attn_mask, scores.dtype), extra)
        if mask is not None:
            if mask.dim() == 2:
                if tuple(mask.shape) != (L, S + extra):
                    raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(mask.shape)}, but should be "
                                       f"{(L, S)}.")
                scores = scores + mask
            elif mask.dim() == 3:
                if tuple(mask.shape) != (N * h, L, S + extra):
                    raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(mask.shape)}, but should be "
                                       f"{(N * h, L, S)}.")
                scores = scores + mask.reshape(N, h, L, S + extra)
            else:
                raise RuntimeError(f"attn_mask's dimension {mask.dim()} is not supported")
        if key_padding_mask is not None and tuple(key_padding_mask.shape) != (N, S):
            raise AssertionError(f"expecting key_padding_mask shape of {(N, S)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        pad = _pad_keys(_as_float_mask(key_padding_mask, scores.dtype), extra)
        if pad is not None:
            scores = scores + pad.reshape(N, 1, 1, S + extra)
        weights = G.softmax(scores, -1)
        if self.dropout > 0.0 and self.training:
            weights = F.dropout(weights, self.dropout, True)
        out = G.matmul(weights, v)                                        # (N, h, L, d)
        out = out.permute(2, 0, 1, 3).reshape(L, N, E)
        out = self.out_proj(out)
        if batched and self.batch_first:
            out = out.transpose(0, 1)
        elif not batched:
            out = out.squeeze(1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            weights = weights.squeeze(0)
        return out, weights
