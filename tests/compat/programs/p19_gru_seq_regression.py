"""Sequence regression: a GRU encoder and a Linear head trained on NumPy sine data with Adam and StepLR."""
import numpy as np
import torch
import torch.nn as nn


def fill_(model, seed, scale=0.3):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in model.named_parameters():
            p.copy_(torch.tensor(rng.uniform(-scale, scale, size=tuple(p.shape))))


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(input_size=1, hidden_size=8, batch_first=True)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        out, h = self.gru(x)
        return self.head(out[:, -1])


t = np.linspace(0, 6 * np.pi, 200)
series = np.sin(t) + 0.1 * np.cos(3 * t)
windows = np.stack([series[i:i + 10] for i in range(0, 180, 6)])
targets = np.array([series[i + 10] for i in range(0, 180, 6)])
x = torch.tensor(windows, dtype=torch.float32).unsqueeze(-1)
y = torch.tensor(targets, dtype=torch.float32).unsqueeze(-1)
model = Forecaster()
fill_(model, 190)
opt = torch.optim.Adam(model.parameters(), lr=0.02)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
losses, lrs = [], []
for _epoch in range(25):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    sched.step()
    losses.append(loss.item())
    lrs.append(sched.get_last_lr()[0])
with torch.no_grad():
    pred = model(x[:4])
results = {"losses": losses[::4], "final": losses[-1], "lrs": lrs, "pred": pred}
