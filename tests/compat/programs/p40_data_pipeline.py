"""A custom Dataset with __getitem__ returning dicts and tuples, DataLoader batching without shuffle,
TensorDataset, drop_last, len(loader), collate of numbers, and a training loop over batches."""

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset


class Squares(Dataset):
    def __init__(self, n):
        self.xs = np.arange(n, dtype=np.float32)

    def __len__(self):
        return len(self.xs)

    def __getitem__(self, i):
        return {"x": torch.tensor([self.xs[i]]), "y": float(self.xs[i] ** 2), "idx": i}


ds = Squares(10)
loader = DataLoader(ds, batch_size=4, shuffle=False)
batches = [(b["x"].squeeze(1).tolist(), b["y"].tolist(), b["idx"].tolist()) for b in loader]
X = torch.linspace(-1, 1, 12).unsqueeze(1)
Y = 3 * X - 1
tds = TensorDataset(X, Y)
dl = DataLoader(tds, batch_size=5, drop_last=True)
w = torch.zeros(1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
opt = torch.optim.SGD([w, b], lr=0.3)
for _epoch in range(10):
    for xb, yb in dl:
        opt.zero_grad()
        loss = ((xb * w + b - yb) ** 2).mean()
        loss.backward()
        opt.step()
pairs = DataLoader([(1, 2.0), (3, 4.0), (5, 6.0)], batch_size=2)
results = {
    "batches": batches,
    "n_loader": len(loader),
    "n_dl": len(dl),
    "tds_len": len(tds),
    "item0": [t.tolist() for t in tds[0]],
    "w": w.item(),
    "b": b.item(),
    "pairs": [[p.tolist() for p in batch] for batch in pairs],
    "pair_dtypes": [str(batch[0].dtype).split(".")[-1] for batch in pairs],
    "y_dtype": next(iter(loader))["y"].dtype == torch.float64,
}
