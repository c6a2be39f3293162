"""An encoder-decoder nn.Transformer for a copy task, in the style of the translation tutorials: token and
positional embeddings, src/tgt key-padding masks, a causal tgt mask, batch_first, norm_first, GELU; the
output layer under parametrizations.weight_norm, a LazyLinear side head, AdamW with LinearLR warm-up, and
greedy decoding."""
import math

import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils import parametrizations

PAD, BOS, VOCAB, D = 0, 1, 9, 16


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D, padding_idx=PAD)
        self.pos = nn.Parameter(torch.zeros(1, 12, D))
        self.transformer = nn.Transformer(d_model=D, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                                          dim_feedforward=32, dropout=0.0, activation="gelu", batch_first=True,
                                          norm_first=True)
        self.out = parametrizations.weight_norm(nn.Linear(D, VOCAB))
        self.aux = nn.LazyLinear(2)

    def forward(self, src, tgt):
        s = self.embed(src) * math.sqrt(D) + self.pos[:, : src.size(1)]
        t = self.embed(tgt) * math.sqrt(D) + self.pos[:, : tgt.size(1)]
        mask = self.transformer.generate_square_subsequent_mask(tgt.size(1))
        h = self.transformer(s, t, tgt_mask=mask, src_key_padding_mask=src == PAD,
                             tgt_key_padding_mask=tgt == PAD, memory_key_padding_mask=src == PAD)
        return self.out(h), self.aux(h.mean(1))


rng = np.random.default_rng(7)
model = Seq2Seq()
model.aux(torch.zeros(1, D))                       # materialise the lazy head before filling the weights
with torch.no_grad():
    for name, p in model.named_parameters():
        if "norm" not in name:
            p.copy_(torch.tensor(rng.uniform(-0.25, 0.25, size=tuple(p.shape)).astype(np.float32)))
src = torch.tensor(rng.integers(2, VOCAB, size=(4, 6)))
src[1, 4:] = PAD
tgt_in = torch.cat([torch.full((4, 1), BOS), src[:, :-1]], 1)
criterion = nn.CrossEntropyLoss(ignore_index=PAD)
optimizer = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.01)
scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.25, total_iters=3)
losses = []
for _ in range(6):
    optimizer.zero_grad()
    logits, aux = model(src, tgt_in)
    loss = criterion(logits.reshape(-1, VOCAB), src.reshape(-1)) + aux.pow(2).mean()
    loss.backward()
    optimizer.step()
    scheduler.step()
    losses.append(loss.item())

model.eval()
with torch.no_grad():
    out = torch.full((4, 1), BOS)
    for _ in range(6):
        logits, _ = model(src, out)
        out = torch.cat([out, logits[:, -1].argmax(-1, keepdim=True)], 1)
results = {"losses": losses, "decoded": out, "state_keys": [k for k in model.state_dict() if "out" in k],
           "aux_in": model.aux.in_features, "lr": scheduler.get_last_lr()}
