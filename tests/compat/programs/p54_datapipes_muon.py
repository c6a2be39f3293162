"""A DataPipe input pipeline (IterableWrapper, a custom functional form, map/filter/shuffle/batch/collate,
DataLoader(batch_size=None, shuffle=False)), a model trained with Muon on its weight matrix and AdamW on
its bias, and F.multi_head_attention_forward with explicit weights."""

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, IterDataPipe, functional_datapipe
from torch.utils.data.datapipes.iter import IterableWrapper


@functional_datapipe("add_noise_free_target")
class WithTarget(IterDataPipe):
    def __init__(self, source, w):
        self.source, self.w = source, w

    def __iter__(self):
        for x in self.source:
            yield x, float(np.dot(x, self.w))


def keep(pair):
    return pair[1] > -4.0


def to_tensors(pair):
    return torch.tensor(pair[0], dtype=torch.float32), torch.tensor(pair[1], dtype=torch.float32)


rng = np.random.default_rng(0)
xs = [rng.standard_normal(4) for _ in range(48)]
true_w = np.array([1.0, -2.0, 0.5, 3.0])
pipe = IterableWrapper(xs).add_noise_free_target(true_w).filter(keep).map(to_tensors).shuffle().batch(8).collate()
loader = DataLoader(pipe, batch_size=None, shuffle=False)
model = torch.nn.Linear(4, 3)
with torch.no_grad():
    model.weight.copy_(torch.tensor(rng.standard_normal((3, 4)) * 0.1, dtype=torch.float32))
    model.bias.zero_()
muon = torch.optim.Muon([model.weight], lr=0.05, weight_decay=0.01)
adamw = torch.optim.AdamW([model.bias], lr=0.01)
losses = []
for _epoch in range(3):
    for xb, yb in loader:
        muon.zero_grad()
        adamw.zero_grad()
        loss = ((model(xb).sum(1) - yb) ** 2).mean()
        loss.backward()
        muon.step()
        adamw.step()
        losses.append(loss.item())

E, h = 4, 2
q = torch.tensor(rng.standard_normal((3, 2, E)), dtype=torch.float32)
in_w = torch.tensor(rng.standard_normal((3 * E, E)) * 0.3, dtype=torch.float32)
out_w = torch.tensor(rng.standard_normal((E, E)) * 0.3, dtype=torch.float32)
mask = torch.tensor([[False, False, True], [False, False, False], [True, False, False]])
attn, weights = F.multi_head_attention_forward(q, q, q, E, h, in_w, torch.zeros(3 * E), None, None, False, 0.0,
                                               out_w, torch.zeros(E), attn_mask=mask, training=False)
results = {
    "n_batches": len(losses) // 3,
    "losses": losses,
    "weight": model.weight.detach().tolist(),
    "bias": model.bias.detach().tolist(),
    "attn": attn.tolist(),
    "weights": weights.tolist(),
    "batch_sizes": [len(b[1]) for b in loader],
}
