"""Linear regression with nn.Linear, MSELoss and SGD on NumPy-made data."""
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(1)
x = torch.tensor(rng.uniform(-1, 1, size=(64, 3)), dtype=torch.float32)
true_w = torch.tensor([[1.5, -2.0, 0.5]])
y = x @ true_w.T + 0.3

model = nn.Linear(3, 1)
with torch.no_grad():
    model.weight.fill_(0.1)
    model.bias.zero_()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loss_fn = nn.MSELoss()
losses = []
for _step in range(60):
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())

results = {"losses": losses[::10], "final": losses[-1], "weight": model.weight.detach(), "bias": model.bias.item(),
           "grad_shape": list(model.weight.grad.shape)}
