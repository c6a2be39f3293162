"""A small VAE in the style of the examples repository's vae/main.py: encoder to (mu, logvar), rsample of a
Normal, Bernoulli-style reconstruction loss and the KL to the standard Normal via kl_divergence; the
deterministic parts (losses with z = mu, KL values, gradients, pathwise gradient of rsample) are reported."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Independent, Normal, kl_divergence


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 6)
        self.fc21 = nn.Linear(6, 2)
        self.fc22 = nn.Linear(6, 2)
        self.fc3 = nn.Linear(2, 6)
        self.fc4 = nn.Linear(6, 8)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))


rng = np.random.default_rng(0)
model = VAE()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.normal(0, 0.4, size=tuple(p.shape)).astype(np.float32)))
x = torch.from_numpy(rng.uniform(0, 1, size=(5, 8)).astype(np.float32))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses, kls = [], []
for _step in range(5):
    optimizer.zero_grad()
    mu, logvar = model.encode(x)
    std = torch.exp(0.5 * logvar)
    q = Normal(mu, std)
    prior = Normal(torch.zeros_like(mu), torch.ones_like(std))
    recon = model.decode(q.mean)
    bce = F.binary_cross_entropy(recon, x, reduction="sum")
    kl = kl_divergence(q, prior).sum()
    kld_closed = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    loss = bce + kl
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    kls.append([kl.item(), kld_closed.item()])

mu, logvar = model.encode(x)
q = Independent(Normal(mu, torch.exp(0.5 * logvar)), 1)
z = q.rsample()
loc = torch.tensor([0.5, -1.0], requires_grad=True)
scale = torch.tensor([2.0, 0.5], requires_grad=True)
Normal(loc, scale).rsample((7,)).sum().backward()
big = Normal(torch.tensor(1.5), torch.tensor(0.5)).rsample((20000,))
results = {
    "losses": losses,
    "kls": kls,
    "log_prob": q.log_prob(mu.detach()).tolist(),
    "entropy": q.entropy().tolist(),
    "z_shape": list(z.shape),
    "z_requires_grad": z.requires_grad,
    "batch_event": [list(q.batch_shape), list(q.event_shape)],
    "loc_grad": loc.grad.tolist(),
    "scale_grad_finite": bool(torch.isfinite(scale.grad).all()),
    "mean_ok": abs(big.mean().item() - 1.5) < 0.03,
    "std_ok": abs(big.std().item() - 0.5) < 0.03,
}
