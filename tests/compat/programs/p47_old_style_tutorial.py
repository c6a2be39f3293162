"""An older-style tutorial: autograd.Variable, type_as, ndimension, manual weight updates through .data,
torch.dist, is_nonzero, a LinearLR warm-up, and torch.max(a, b) in a hinge loss."""
import numpy as np
import torch
from torch.autograd import Variable

rng = np.random.default_rng(47)
x = Variable(torch.from_numpy(rng.normal(size=(30, 2)).astype(np.float32)))
labels = torch.from_numpy((rng.normal(size=30) > 0).astype(np.int64))
y = (labels * 2 - 1).type_as(x)
w = Variable(torch.zeros(2), requires_grad=True)
b = Variable(torch.zeros(1), requires_grad=True)
opt = torch.optim.SGD([w, b], lr=0.2)
warmup = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=5)
losses, lrs = [], []
for _ in range(12):
    margin = 1 - y * (x.mv(w) + b)
    loss = torch.max(margin, torch.zeros_like(margin)).mean() + 0.01 * w.dot(w)
    opt.zero_grad()
    loss.backward()
    opt.step()
    warmup.step()
    losses.append(loss.item())
    lrs.append(warmup.get_last_lr()[0])
w.data.mul_(0.5)
results = {
    "losses": losses,
    "lrs": lrs,
    "w": w,
    "b": b.item(),
    "y_dtype": y.dtype == torch.float32,
    "ndim": x.ndimension(),
    "dist": torch.dist(w, torch.ones(2)).item(),
    "dist_p1": w.dist(torch.ones(2), p=1).item(),
    "nonzero": torch.is_nonzero(torch.tensor([0.5])),
    "var_leaf": Variable(torch.ones(2) * 3).is_leaf,
    "var_rg": Variable(torch.ones(2)).requires_grad,
    "hstack": torch.hstack([w.detach(), b.detach()]),
    "cumprod": torch.cumprod(torch.tensor([1.0, 2.0, 3.0, 4.0]), dim=0),
}
