"""Reductions in their positional, keyword, dim-tuple and keepdim forms."""

import numpy as np
import torch

rng = np.random.default_rng(29)
x = torch.tensor(rng.normal(size=(3, 4, 5)), dtype=torch.float32)
m = x[0]
mx = torch.max(m, 1)
mn = m.min(dim=0)
vals, idx = torch.sort(m, dim=1, descending=True)
tk = torch.topk(m, 2)
results = {
    "sum": x.sum().item(),
    "sum_dim": x.sum(1),
    "sum_tuple": x.sum(dim=(0, 2)),
    "sum_keep": list(x.sum((1, 2), keepdim=True).shape),
    "mean": x.mean(dim=-1),
    "mean_tuple_keep": x.mean((0, 1), True),
    "var_pos": m.var(1, True, True),
    "std_kw": m.std(dim=0, unbiased=False),
    "var_all": m.var().item(),
    "std_corr": m.std(1, correction=0),
    "prod": m[:, :3].prod(1),
    "max_all": m.max().item(),
    "max_vals": mx[0],
    "max_idx": mx[1],
    "max_named": mx.values,
    "min_idx": mn.indices,
    "max_dim0": m.max(dim=0)[0],
    "max_pair": torch.max(m, torch.zeros_like(m)),
    "min_pair": torch.min(m, m * 0.5),
    "maximum": torch.maximum(m, -m),
    "argmax": m.argmax().item(),
    "argmax_dim": torch.argmax(m, dim=1),
    "argmin_keep": m.argmin(1, keepdim=True),
    "sort_vals": vals,
    "sort_idx": idx,
    "argsort": torch.argsort(m[0]),
    "topk_v": tk.values,
    "topk_i": tk[1],
    "topk_small": torch.topk(m[0], k=3, largest=False).values,
    "kth": m.kthvalue(2, dim=1).values,
    "median": m.median().item(),
    "median_dim": m.median(dim=1).values,
    "cumsum": m.cumsum(dim=1),
    "cumprod": torch.cumprod(m[0], 0),
    "logsumexp": torch.logsumexp(m, dim=1),
    "norm": m.norm().item(),
    "norm_p1": m.norm(p=1, dim=1),
    "amax": m.amax(dim=(0, 1)).item(),
    "amin": torch.amin(x, dim=(1, 2)),
    "all_pos": (m.abs() >= 0).all().item(),
    "count": torch.count_nonzero(m > 0).item(),
    "std_mean": [t.tolist() for t in torch.std_mean(m, dim=1)],
    "var_mean": [t.tolist() for t in torch.var_mean(m, 0)],
    "aminmax": [t.tolist() for t in torch.aminmax(m[0])],
    "nansum": torch.nansum(torch.tensor([1.0, float("nan"), 2.0])).item(),
    "cummax": m[0].cummax(0).values,
    "mode": torch.tensor([1, 2, 2, 3]).mode().values.item(),
    "unique": torch.unique(torch.tensor([3, 1, 3, 2])),
    "unique_counts": [t.tolist() for t in torch.unique(torch.tensor([3, 1, 3, 2]), return_counts=True)],
    "sum_int_dtype": torch.tensor([1, 2], dtype=torch.int32).sum().dtype == torch.int64,
    "mean_dtype": torch.tensor([1, 2]).float().mean().item(),
    "sum_dtype_kw": x.sum(dtype=torch.float64).dtype == torch.float64,
}
