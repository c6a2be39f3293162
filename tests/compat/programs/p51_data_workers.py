"""Data loading with worker processes: a map-style Dataset with num_workers=2 and a worker_init_fn, an
IterableDataset sharded with get_worker_info, persistent workers over two epochs, and training a linear
model from batches loaded by workers."""

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, TensorDataset, get_worker_info
from torch.utils.data.dataloader import default_collate


class Pairs(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.tensor([float(i), float(i) * 2]), i % 3


class Shards(IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            lo, hi = self.start, self.end
        else:
            per = int(np.ceil((self.end - self.start) / info.num_workers))
            lo = self.start + info.id * per
            hi = min(lo + per, self.end)
        return iter(range(lo, hi))


def init_fn(worker_id):
    np.random.seed(worker_id)


loader = DataLoader(Pairs(9), batch_size=4, num_workers=2, worker_init_fn=init_fn)
map_batches = [(x.tolist(), y.tolist()) for x, y in loader]
shard_items = sorted(int(v) for v in DataLoader(Shards(3, 11), num_workers=2))
shard_batches = sorted(b.tolist() for b in DataLoader(Shards(0, 10), batch_size=3, num_workers=2))
persistent = DataLoader(Pairs(6), batch_size=3, num_workers=2, persistent_workers=True)
epochs = [[y.tolist() for _, y in persistent] for _ in range(2)]

rng = np.random.default_rng(3)
X = torch.from_numpy(rng.normal(size=(40, 3)).astype(np.float32))
Y = X @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.1
train = DataLoader(TensorDataset(X, Y), batch_size=8, num_workers=2, prefetch_factor=2)
model = torch.nn.Linear(3, 1)
with torch.no_grad():
    model.weight.zero_()
    model.bias.zero_()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for _epoch in range(3):
    for xb, yb in train:
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
    losses.append(loss.item())

results = {
    "map_batches": map_batches,
    "len": len(loader),
    "shard_items": shard_items,
    "shard_batches": shard_batches,
    "epochs": epochs,
    "losses": losses,
    "weights": model.weight.tolist(),
    "collate": default_collate([(1, 2.0), (3, 4.0)])[0].tolist(),
}
