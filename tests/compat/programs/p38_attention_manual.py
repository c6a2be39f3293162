"""Scaled dot-product attention written by hand vs F.scaled_dot_product_attention, causal masks with
masked_fill and triu, bmm/matmul/einsum, softmax with dim, and nn.MultiheadAttention weights."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(38)
B, T, D = 2, 4, 6
q = torch.tensor(rng.normal(size=(B, T, D)), dtype=torch.float32)
k = torch.tensor(rng.normal(size=(B, T, D)), dtype=torch.float32)
v = torch.tensor(rng.normal(size=(B, T, D)), dtype=torch.float32)
scores = q @ k.transpose(-2, -1) / math.sqrt(D)
causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
scores = scores.masked_fill(causal, float("-inf"))
attn = F.softmax(scores, dim=-1)
manual = torch.bmm(attn, v)
fused = F.scaled_dot_product_attention(q, k, v, is_causal=True)
mask = torch.tril(torch.ones(T, T)).bool()
fused_mask = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
mha = nn.MultiheadAttention(embed_dim=D, num_heads=2, batch_first=True)
with torch.no_grad():
    for p in mha.parameters():
        p.copy_(torch.tensor(rng.uniform(-0.4, 0.4, size=tuple(p.shape)), dtype=torch.float32))
out, weights = mha(q, k, v, need_weights=True)
out2, w2 = mha(q, q, q, attn_mask=causal, average_attn_weights=False)
heads = q.view(B, T, 2, 3).permute(0, 2, 1, 3)
results = {
    "attn": attn[0],
    "manual": manual,
    "same": torch.allclose(manual, fused, atol=1e-6),
    "fused_mask": fused_mask[1],
    "einsum": torch.einsum("btd,bsd->bts", q, k)[0, 0],
    "matmul_b": torch.matmul(q, k.mT).shape == (B, T, T),
    "mha_out": out,
    "mha_w": weights,
    "w2_shape": list(w2.shape),
    "out2": out2[0, 0],
    "heads": list(heads.shape),
    "rowsum": attn.sum(-1),
    "log_softmax": F.log_softmax(scores[0, -1], dim=0),
}
