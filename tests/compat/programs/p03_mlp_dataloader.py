"""An MLP classifier trained from a DataLoader over a TensorDataset (no shuffling), with CrossEntropyLoss."""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def fill_(model, seed, scale=0.3):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in model.named_parameters():
            p.copy_(torch.tensor(rng.uniform(-scale, scale, size=tuple(p.shape))))


rng = np.random.default_rng(3)
centers = np.array([[2.0, 0.0], [-2.0, 0.0], [0.0, 2.5]])
labels = np.repeat(np.arange(3), 30)
points = centers[labels] + rng.normal(scale=0.7, size=(90, 2))
ds = TensorDataset(torch.tensor(points, dtype=torch.float32), torch.tensor(labels))
loader = DataLoader(ds, batch_size=16)

model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 3))
fill_(model, 30)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5, weight_decay=1e-3)
criterion = nn.CrossEntropyLoss()
epoch_losses = []
for _epoch in range(8):
    total = 0.0
    for xb, yb in loader:
        opt.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item() * xb.shape[0]
    epoch_losses.append(total / len(ds))

model.eval()
with torch.no_grad():
    logits = model(ds.tensors[0])
    pred = logits.argmax(dim=1)
    accuracy = (pred == ds.tensors[1]).float().mean().item()

results = {"len_loader": len(loader), "epoch_losses": epoch_losses, "accuracy": accuracy,
           "logits_head": logits[:4], "label_dtype_is_long": ds.tensors[1].dtype == torch.long}
