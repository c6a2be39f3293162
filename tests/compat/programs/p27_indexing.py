"""Indexing and masks: slicing, fancy indexing, boolean masks, index_select, gather/scatter, where, nonzero."""

import numpy as np
import torch

x = torch.tensor(np.arange(24).reshape(4, 6), dtype=torch.float32)
mask = x > 10
y = x.clone()
y[y < 5] = 0
y[:, 0] = -1
y[1] += 100
z = x.clone()
z[mask] = z[mask] * 2
idx = torch.tensor([0, 2])
w = x.clone()
w[idx, 1:3] = torch.tensor([[9.0, 8.0], [7.0, 6.0]])
src = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
sc = torch.zeros(2, 3).scatter_(1, torch.tensor([[0, 2], [1, 0]]), src)
sa = torch.zeros(5).scatter_add(0, torch.tensor([0, 1, 0, 3]), torch.tensor([1.0, 2.0, 3.0, 4.0]))
results = {
    "row": x[1],
    "col": x[:, 2],
    "neg": x[-1, -2:],
    "step": x[::2, 1::3],
    "ellipsis": x[..., 0],
    "none": list(x[None, :, 1].shape),
    "fancy": x[[0, 3], [1, 2]],
    "masked": x[mask],
    "mask_count": mask.sum().item(),
    "y": y,
    "z": z,
    "w": w,
    "index_select": x.index_select(1, torch.tensor([0, 5])),
    "gather": torch.gather(x, 1, torch.tensor([[0], [1], [2], [3]])),
    "gather_m": x.gather(0, torch.tensor([[3, 2, 1, 0, 0, 0]])),
    "scatter": sc,
    "scatter_add": sa,
    "where": torch.where(x > 12, x, torch.zeros_like(x)),
    "where_scalar": torch.where(x > 12, x, -1.0),
    "where_one": [t.tolist() for t in torch.where(x > 20)],
    "nonzero": torch.nonzero(x[0]),
    "nonzero_tuple": [t.tolist() for t in (x[:2] > 8).nonzero(as_tuple=True)],
    "masked_fill": x.masked_fill(mask, -5.0),
    "masked_select": torch.masked_select(x, x < 3),
    "take": torch.take(x, torch.tensor([0, 7, 23])),
    "bool_idx_row": x[torch.tensor([True, False, True, False])],
    "argwhere": torch.argwhere(x[0] > 2),
    "any": mask.any().item(),
    "all": mask.all().item(),
    "any_dim": mask.any(dim=1),
    "all_dim": (x >= 0).all(dim=0),
    "index_long": x[torch.tensor(2)],
    "tensor_int_index": x[1, torch.tensor([0, 1])],
    "clone_indep": (x.clone().add_(1) - x).sum().item(),
    "index_put": x.clone().index_put_((torch.tensor([0, 1]), torch.tensor([0, 0])), torch.tensor([50.0, 60.0]))[:2, 0],
    "index_fill": x.clone().index_fill_(1, torch.tensor([1]), 0.0)[0],
    "index_add": torch.zeros(3, 2).index_add_(0, torch.tensor([0, 2, 0]), torch.ones(3, 2)),
}
