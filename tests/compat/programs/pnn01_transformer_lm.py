"""A small transformer language model in the style of the word-language-model example: embedding scaled by
sqrt(d), sinusoidal positions, nn.TransformerEncoder with a causal mask from generate_square_subsequent_mask
and a padding mask, a tied-size decoder; Adam, clip_grad_norm_, StepLR. Dropout off for determinism."""
import math

import numpy as np
import torch
import torch.nn as nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.0, max_len=64):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer("pe", pe)

    def forward(self, x):
        x = x + self.pe[: x.size(0), :]
        return self.dropout(x)


class TransformerModel(nn.Module):
    def __init__(self, ntoken, ninp, nhead, nhid, nlayers):
        super().__init__()
        self.model_type = "Transformer"
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp)
        layer = nn.TransformerEncoderLayer(ninp, nhead, nhid, dropout=0.0)
        self.transformer_encoder = nn.TransformerEncoder(layer, nlayers, enable_nested_tensor=False)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)

    def forward(self, src, padding=None):
        if self.src_mask is None or self.src_mask.size(0) != len(src):
            self.src_mask = nn.Transformer.generate_square_subsequent_mask(len(src))
        src = self.encoder(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.transformer_encoder(src, self.src_mask, src_key_padding_mask=padding)
        return torch.log_softmax(self.decoder(output), dim=-1)


rng = np.random.default_rng(0)
model = TransformerModel(ntoken=13, ninp=16, nhead=4, nhid=32, nlayers=2)
with torch.no_grad():
    for name, p in model.named_parameters():
        if "norm" not in name:
            p.copy_(torch.tensor(rng.uniform(-0.2, 0.2, size=tuple(p.shape)).astype(np.float32)))

data = torch.tensor(rng.integers(0, 13, size=(9, 4)))       # (sequence, batch)
padding = torch.zeros(4, 8, dtype=torch.bool)
padding[3, 6:] = True
criterion = nn.NLLLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 2, gamma=0.5)
losses, norms, lrs = [], [], []
model.train()
for _ in range(5):
    inputs, targets = data[:-1], data[1:]
    optimizer.zero_grad()
    output = model(inputs, padding)
    loss = criterion(output.view(-1, 13), targets.reshape(-1))
    loss.backward()
    norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)))
    optimizer.step()
    scheduler.step()
    losses.append(loss.item())
    lrs.append(scheduler.get_last_lr()[0])

model.eval()
with torch.no_grad():
    probs = model(data[:-1]).exp()[-1, 0]
results = {"losses": losses, "norms": norms, "lrs": lrs, "last_probs": probs,
           "keys": list(model.state_dict())[:6], "n_params": sum(p.numel() for p in model.parameters())}
