"""Checkpoint and resume: model and optimizer state_dicts with the epoch in one torch.save to an in-memory file,
torch.load(weights_only=True, map_location="cpu") into a fresh model and optimizer, training continued, and
the run compared with one never interrupted."""
import io

import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(48)
x = torch.tensor(rng.normal(size=(32, 4)), dtype=torch.float32)
y = torch.tensor(rng.normal(size=(32, 2)), dtype=torch.float32)
init = [rng.uniform(-0.5, 0.5, size=s) for s in [(6, 4), (6,), (2, 6), (2,)]]


def build():
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2))
    with torch.no_grad():
        for p, v in zip(model.parameters(), init, strict=True):
            p.copy_(torch.tensor(v, dtype=torch.float32))
    return model, torch.optim.Adam(model.parameters(), lr=0.05)


def train(model, opt, steps):
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


straight, straight_opt = build()
straight_losses = train(straight, straight_opt, 10)

model, opt = build()
first = train(model, opt, 5)
buffer = io.BytesIO()
torch.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 5, "name": "run"}, buffer)
size = len(buffer.getvalue())
buffer.seek(0)
checkpoint = torch.load(buffer, weights_only=True, map_location="cpu")
resumed, resumed_opt = build()
resumed.load_state_dict(checkpoint["model"])
resumed_opt.load_state_dict(checkpoint["optim"])
second = train(resumed, resumed_opt, 5)

results = {"straight": straight_losses, "resumed": first + second, "epoch": checkpoint["epoch"],
           "name": checkpoint["name"], "keys": sorted(checkpoint["optim"]["state"][0].keys()),
           "weight": resumed[0].weight.detach(), "bigger_than_weights": size > 4 * 60}
