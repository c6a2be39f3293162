"""Checkpointing: torch.save / torch.load of a model's state_dict to a file, loading into a fresh model, eval mode
with Dropout and BatchNorm, and torch.no_grad inference."""
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn


def build():
    return nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 2))


rng = np.random.default_rng(24)
x = torch.tensor(rng.normal(size=(10, 3)), dtype=torch.float32)
model = build()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.uniform(-0.5, 0.5, size=tuple(p.shape))))
model.train()
for _ in range(3):
    model[1](model[0](x))                      # update the running statistics
model.eval()
with torch.no_grad():
    before = model(x)
path = os.path.join(tempfile.mkdtemp(), "model.pt")
torch.save(model.state_dict(), path)
fresh = build()
missing = fresh.load_state_dict(torch.load(path))
fresh.eval()
with torch.no_grad():
    after = fresh(x)
results = {"keys": list(torch.load(path).keys()), "before": before, "same": (before - after).abs().max().item(),
           "missing": list(missing.missing_keys), "running_var": fresh[1].running_var,
           "tracked": fresh[1].num_batches_tracked.item(), "requires_grad": before.requires_grad}
