"""RNNCell, LSTMCell and GRUCell unrolled by hand; a few training steps of a cell-based sequence regressor."""
import numpy as np
import torch
import torch.nn as nn


def fill_(model, seed, scale=0.4):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in model.named_parameters():
            p.copy_(torch.tensor(rng.uniform(-scale, scale, size=tuple(p.shape))))


class CellModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTMCell(2, 5)
        self.gru = nn.GRUCell(5, 4)
        self.rnn = nn.RNNCell(4, 3, nonlinearity="tanh")
        self.head = nn.Linear(3, 1)

    def forward(self, seq):
        h = c = None
        g = r = None
        for t in range(seq.shape[1]):
            h, c = self.lstm(seq[:, t], None if h is None else (h, c))
            g = self.gru(h, g)
            r = self.rnn(g, r)
        return self.head(r)


rng = np.random.default_rng(6)
seq = torch.tensor(rng.normal(size=(4, 5, 2)), dtype=torch.float32)
target = seq.sum(dim=(1, 2)).unsqueeze(1) * 0.1
model = CellModel()
fill_(model, 60)
opt = torch.optim.RMSprop(model.parameters(), lr=0.01)
losses = []
for _ in range(6):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(seq), target)
    loss.backward()
    opt.step()
    losses.append(loss.item())

single = nn.GRUCell(2, 3)
fill_(single, 61)
unbatched = single(seq[0, 0])
results = {"losses": losses, "unbatched_shape": list(unbatched.shape), "unbatched": unbatched,
           "names": [n for n, _ in model.named_parameters()], "repr": repr(model)}
