"""An MLP built from the activation layers (LeakyReLU, ELU, SELU, Softplus, Hardtanh, ReLU6, Mish, Hardswish,
Hardsigmoid, LogSigmoid, GELU, SiLU), trained with SGD; per-activation outputs, gradients and reprs."""
import numpy as np
import torch
import torch.nn as nn

acts = [nn.LeakyReLU(0.2), nn.ELU(alpha=0.5), nn.SELU(), nn.Softplus(beta=2.0), nn.Hardtanh(-0.5, 0.8), nn.ReLU6(),
        nn.Mish(), nn.Hardswish(), nn.Hardsigmoid(), nn.LogSigmoid(), nn.GELU(), nn.SiLU(), nn.Tanh(), nn.Sigmoid()]
x = torch.linspace(-4.0, 4.0, 17, requires_grad=True)
results = {"reprs": [repr(a) for a in acts]}
for a in acts:
    y = a(x)
    (g,) = torch.autograd.grad(y.sum(), x)
    results[type(a).__name__] = {"y": y, "grad": g}
inplace = nn.LeakyReLU(0.1, inplace=True)
z = torch.tensor([-1.0, 2.0])
inplace(z)
results["inplace"] = z

rng = np.random.default_rng(23)
data = torch.tensor(rng.normal(size=(32, 4)), dtype=torch.float32)
target = (data[:, :1] * data[:, 1:2]).tanh()
model = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.1), nn.Linear(16, 16), nn.ELU(), nn.Linear(16, 1), nn.Tanh())
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.uniform(-0.4, 0.4, size=tuple(p.shape))))
opt = torch.optim.SGD(model.parameters(), lr=0.2)
losses = []
for _ in range(20):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(data), target)
    loss.backward()
    opt.step()
    losses.append(loss.item())
results["losses"] = losses[::4]
results["model"] = repr(model)
