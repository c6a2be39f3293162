"""A character-level style loop over time with nn.LSTMCell and nn.GRUCell, then nn.LSTM with batch_first,
pack of hidden states, and gradient clipping by value."""

import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(37)
torch.manual_seed(0)
lstm_cell = nn.LSTMCell(3, 5)
gru_cell = nn.GRUCell(3, 5)
lstm = nn.LSTM(input_size=3, hidden_size=4, num_layers=2, batch_first=True)
head = nn.Linear(5, 1)
for mod in (lstm_cell, gru_cell, lstm, head):
    with torch.no_grad():
        for p in mod.parameters():
            p.copy_(torch.tensor(rng.uniform(-0.3, 0.3, size=tuple(p.shape)), dtype=torch.float32))
seq = torch.tensor(rng.normal(size=(6, 2, 3)), dtype=torch.float32)  # time, batch, features
h = torch.zeros(2, 5)
c = torch.zeros(2, 5)
g = torch.zeros(2, 5)
outs = []
for t in range(seq.size(0)):
    h, c = lstm_cell(seq[t], (h, c))
    g = gru_cell(seq[t], g)
    outs.append(h)
stacked = torch.stack(outs)
pred = head(stacked[-1] + g).squeeze(-1)
loss = ((pred - torch.tensor([0.5, -0.5])) ** 2).mean()
loss.backward()
torch.nn.utils.clip_grad_value_(lstm_cell.parameters(), clip_value=0.01)
out, (hn, cn) = lstm(seq.transpose(0, 1))
results = {
    "stacked_shape": list(stacked.shape),
    "pred": pred,
    "loss": loss.item(),
    "h": h,
    "g": g,
    "max_grad": max(p.grad.abs().max().item() for p in lstm_cell.parameters()),
    "out_shape": list(out.shape),
    "hn_shape": list(hn.shape),
    "last": out[:, -1],
    "hn_top": hn[-1],
    "cn_sum": cn.sum().item(),
    "weight_names": [n for n, _ in lstm.named_parameters()][:4],
}
