"""Datasets and DataLoader: batching, drop_last, len, collation of tensors/numbers/tuples/dicts, shuffling with a
generator (compared by content, not order) and random_split."""
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset, random_split


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": torch.tensor([float(i), float(i) ** 2]), "label": i % 3, "weight": i / 10, "pair": (i, -i)}


ds = Squares(10)
loader = DataLoader(ds, batch_size=4)
batches = list(loader)
first = batches[0]
results = {
    "len": len(loader), "len_drop": len(DataLoader(ds, batch_size=4, drop_last=True)),
    "sizes": [b["x"].shape[0] for b in batches], "first_x": first["x"], "first_label": first["label"],
    "label_is_int64": first["label"].dtype == torch.int64, "weight_is_float64": first["weight"].dtype == torch.float64,
    "first_weight": first["weight"], "pair": [p.tolist() for p in first["pair"]], "keys": sorted(first.keys()),
}

x = torch.arange(20.0).reshape(10, 2)
y = torch.arange(10)
tds = TensorDataset(x, y)
results["tds_item"] = [t.tolist() for t in tds[3]]
g = torch.Generator().manual_seed(0)
shuffled = DataLoader(tds, batch_size=3, shuffle=True, generator=g, drop_last=False)
for epoch in range(2):
    seen = sorted(int(v) for _, yb in shuffled for v in yb)
    results[f"epoch{epoch}_seen"] = seen
results["shuffled_shapes"] = sorted(list(xb.shape) for xb, _ in shuffled)
dropped = DataLoader(tds, batch_size=3, shuffle=True, drop_last=True, generator=torch.Generator().manual_seed(1))
results["dropped_count"] = sum(yb.numel() for _, yb in dropped)

parts = random_split(range(10), [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(42))
results["split_lengths"] = [len(p) for p in parts]
results["split_union"] = sorted(i for p in parts for i in p)
parts2 = random_split(tds, [7, 3])
results["split2_lengths"] = [len(p) for p in parts2]
results["split2_item_len"] = len(parts2[0][0])
odd = random_split(list(range(7)), [0.34, 0.33, 0.33], generator=torch.Generator().manual_seed(3))
results["odd_lengths"] = [len(p) for p in odd]

numbers = DataLoader([1.5, 2.5, 3.5], batch_size=2)
results["numbers"] = [b.tolist() for b in numbers]
arrays = DataLoader([np.ones(2) * i for i in range(3)], batch_size=3)
results["arrays"] = next(iter(arrays))
results["tuples"] = [[t.tolist() for t in b] for b in DataLoader([(1, 2.0), (3, 4.0)], batch_size=2)]
results["collate_fn"] = list(DataLoader(range(5), batch_size=2, collate_fn=lambda b: sum(b)))
