"""Logistic regression written by hand: requires_grad_(), manual SGD under no_grad, sigmoid, BCE by formula."""

import numpy as np
import torch

rng = np.random.default_rng(31)
X = torch.from_numpy(rng.normal(size=(80, 2)).astype(np.float32))
y = (X[:, 0] + 0.5 * X[:, 1] > 0).float().unsqueeze(1)
w = torch.zeros(2, 1).requires_grad_()
b = torch.zeros(1, requires_grad=True)
lr = 0.5
history = []
for epoch in range(40):
    p = torch.sigmoid(X @ w + b)
    loss = -(y * torch.log(p + 1e-7) + (1 - y) * torch.log(1 - p + 1e-7)).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b.sub_(lr * b.grad)
        w.grad.zero_()
        b.grad = None
    if epoch % 10 == 0:
        history.append(round(loss.item(), 6))


@torch.no_grad()
def predict(inputs):
    return (torch.sigmoid(inputs @ w + b) > 0.5).long()


pred = predict(X)
acc = (pred == y.long()).float().mean()
results = {
    "history": history,
    "w": w.detach().numpy().tolist(),
    "b": b.item(),
    "acc": acc.item(),
    "pred_dtype": pred.dtype == torch.int64,
    "pred_requires_grad": pred.requires_grad,
    "grad_none": b.grad is None,
    "w_grad": w.grad.tolist(),
    "is_leaf": w.is_leaf,
    "p_is_leaf": p.is_leaf,
    "grad_fn": type(p.grad_fn).__name__,
    "detached": p.detach().requires_grad,
    "loss_grad_fn_none": loss.detach().grad_fn is None,
}
