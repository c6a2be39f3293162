"""A metrics script mixing nn with tensor ops another change adds: max(dim) named tuples, einsum, allclose,
torch.Size, f-string formatting of a one-element tensor, topk(...).indices."""
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(22)
logits = torch.tensor(rng.normal(size=(6, 4)), dtype=torch.float32)
labels = torch.tensor([0, 1, 2, 3, 1, 0])
probs = F.softmax(logits, dim=1)
best = probs.max(dim=1)
attn = torch.einsum("ik,jk->ij", logits, logits)
results = {
    "confidence": best.values, "pred": best.indices, "accuracy": (best.indices == labels).float().mean().item(),
    "top2": probs.topk(2, dim=1).indices, "gram": attn, "symmetric": torch.allclose(attn, attn.T),
    "shape_is_size": logits.shape == torch.Size([6, 4]), "formatted": f"{probs.sum():.3f}",
}
