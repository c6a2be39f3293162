"""Logistic regression with BCEWithLogitsLoss (pos_weight), BCELoss on sigmoid, and Adam."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(2)
x = torch.tensor(rng.normal(size=(100, 2)), dtype=torch.float32)
y = ((x[:, 0] - 0.5 * x[:, 1]) > 0.2).float().unsqueeze(1)

model = nn.Linear(2, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.2, 0.1]]))
    model.bias.fill_(-0.1)
loss_fn = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0]))
opt = torch.optim.Adam(model.parameters(), lr=0.05)
history = []
for _epoch in range(40):
    opt.zero_grad()
    logits = model(x)
    loss = loss_fn(logits, y)
    loss.backward()
    opt.step()
    history.append(loss.item())

with torch.no_grad():
    probs = torch.sigmoid(model(x))
    acc = ((probs > 0.5).float() == y).float().mean().item()
    bce = nn.BCELoss()(probs, y).item()
    bce_w = F.binary_cross_entropy(probs, y, weight=torch.full((100, 1), 0.5), reduction="sum").item()
    bce_logits_none = F.binary_cross_entropy_with_logits(model(x), y, reduction="none")[:5]

results = {"history": history[::8], "accuracy": acc, "bce": bce, "bce_weighted_sum": bce_w,
           "per_sample": bce_logits_none, "weight": model.weight.detach()}
