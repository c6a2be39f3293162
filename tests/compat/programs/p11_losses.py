"""Every loss, module and functional, with each reduction, weights, ignore_index and options; values and grads."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(11)
x = torch.tensor(rng.normal(size=(6, 4)), dtype=torch.float32, requires_grad=True)
t = torch.tensor(rng.normal(size=(6, 4)), dtype=torch.float32)
probs = torch.sigmoid(torch.tensor(rng.normal(size=(6, 4)), dtype=torch.float32)).requires_grad_()
labels01 = torch.tensor(rng.integers(0, 2, size=(6, 4)), dtype=torch.float32)
cls = torch.tensor([0, 3, 1, 1, 2, 3])
w = torch.tensor([1.0, 2.0, 0.5, 1.5])
results = {}
for reduction in ("mean", "sum", "none"):
    r = {}
    r["mse"] = nn.MSELoss(reduction=reduction)(x, t)
    r["l1"] = nn.L1Loss(reduction=reduction)(x, t)
    r["smooth_l1"] = nn.SmoothL1Loss(reduction=reduction, beta=0.5)(x, t)
    r["huber"] = nn.HuberLoss(reduction=reduction, delta=0.7)(x, t)
    r["bce"] = nn.BCELoss(weight=w, reduction=reduction)(probs, labels01)
    r["bce_logits"] = nn.BCEWithLogitsLoss(weight=w, pos_weight=torch.tensor([1.0, 2.0, 3.0, 0.5]),
                                           reduction=reduction)(x, labels01)
    logp = F.log_softmax(x, dim=1)
    r["nll"] = nn.NLLLoss(weight=w, ignore_index=1, reduction=reduction)(logp, cls)
    r["ce"] = nn.CrossEntropyLoss(weight=w, reduction=reduction, label_smoothing=0.1)(x, cls)
    r["kl"] = nn.KLDivLoss(reduction=reduction)(logp, F.softmax(t, dim=1))
    r["kl_log_target"] = nn.KLDivLoss(reduction=reduction, log_target=True)(logp, F.log_softmax(t, dim=1))
    results[reduction] = r
results["kl_batchmean"] = F.kl_div(F.log_softmax(x, 1), F.softmax(t, 1), reduction="batchmean")
results["smooth_l1_default"] = F.smooth_l1_loss(x, t)
results["huber_default"] = F.huber_loss(x, t)
results["nll_no_weight"] = F.nll_loss(F.log_softmax(x, 1), cls)
results["ce_ignore"] = F.cross_entropy(x, cls, ignore_index=3)

total = sum(v.sum() for r in ("mean", "sum") for v in results[r].values())
total.backward()
results["x_grad"] = x.grad
results["probs_grad"] = probs.grad
