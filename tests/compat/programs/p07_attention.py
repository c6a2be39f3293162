"""MultiheadAttention (masks, batch_first, need_weights) and F.scaled_dot_product_attention variants."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def fill_(model, seed, scale=0.3):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in model.named_parameters():
            p.copy_(torch.tensor(rng.uniform(-scale, scale, size=tuple(p.shape))))


rng = np.random.default_rng(7)
q = torch.tensor(rng.normal(size=(2, 3, 4, 8)), dtype=torch.float32)
k = torch.tensor(rng.normal(size=(2, 3, 5, 8)), dtype=torch.float32)
v = torch.tensor(rng.normal(size=(2, 3, 5, 8)), dtype=torch.float32)
bool_mask = torch.tensor(rng.uniform(size=(4, 5)) > 0.3)
bool_mask[:, 0] = True
float_mask = torch.tensor(rng.normal(size=(4, 5)), dtype=torch.float32)
results = {
    "plain": F.scaled_dot_product_attention(q, k, v)[0, 0],
    "bool_mask": F.scaled_dot_product_attention(q, k, v, attn_mask=bool_mask)[1, 2],
    "float_mask": F.scaled_dot_product_attention(q, k, v, attn_mask=float_mask)[0, 1],
    "scaled": F.scaled_dot_product_attention(q, k, v, scale=0.5)[1, 0],
    "causal": F.scaled_dot_product_attention(q, q, q, is_causal=True)[0, 0],
}
manual = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(8), dim=-1) @ v
results["manual_matches"] = (manual - F.scaled_dot_product_attention(q, k, v)).abs().max().item() < 1e-5

mha = nn.MultiheadAttention(8, 2, batch_first=True)
fill_(mha, 70)
x = torch.tensor(rng.normal(size=(2, 4, 8)), dtype=torch.float32, requires_grad=True)
pad = torch.tensor([[False, False, False, True], [False, False, False, False]])
causal = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
out, w = mha(x, x, x, key_padding_mask=pad, attn_mask=causal)
out.pow(2).sum().backward()
results["mha_out"] = out[0]
results["mha_weights"] = w[1]
results["mha_x_grad"] = x.grad[0, :2]
results["mha_in_proj_grad"] = mha.in_proj_weight.grad[:2, :4]
out2, w2 = mha(x, x, x, average_attn_weights=False)
results["per_head_shape"] = list(w2.shape)
out3, w3 = mha(x, x, x, need_weights=False)
results["no_weights"] = w3 is None
seq_first = nn.MultiheadAttention(8, 4)
fill_(seq_first, 71)
y = torch.tensor(rng.normal(size=(5, 2, 8)), dtype=torch.float32)
out4, w4 = seq_first(y, y, y, attn_mask=torch.tensor(rng.normal(size=(5, 5)), dtype=torch.float32))
results["seq_first"] = out4[:, 1]
results["seq_first_w"] = w4[0]
results["names"] = [n for n, _ in mha.named_parameters()]
results["repr"] = repr(mha)
