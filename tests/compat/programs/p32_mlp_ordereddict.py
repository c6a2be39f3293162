"""An MLP classifier with nn.Sequential(OrderedDict), cross_entropy with label smoothing, clip_grad_norm_,
zero_grad(set_to_none=True), eval()/train(), dropout in eval, state_dict round trip."""

from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(32)
X = torch.tensor(rng.normal(size=(48, 4)), dtype=torch.float32)
y = torch.tensor(rng.integers(0, 3, size=48))
model = nn.Sequential(
    OrderedDict(
        [
            ("fc1", nn.Linear(4, 16)),
            ("act", nn.ReLU()),
            ("drop", nn.Dropout(p=0.3)),
            ("fc2", nn.Linear(16, 3)),
        ]
    )
)
with torch.no_grad():
    for _name, p in model.named_parameters():
        p.copy_(torch.tensor(rng.normal(scale=0.3, size=tuple(p.shape)), dtype=torch.float32))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
norms, losses = [], []
for _step in range(25):
    model.eval()  # deterministic: dropout off
    opt.zero_grad(set_to_none=True)
    logits = model(X)
    loss = F.cross_entropy(logits, y, label_smoothing=0.1)
    loss.backward()
    norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)))
    opt.step()
    losses.append(loss.item())
model.train()
training = model.training and model.drop.training
model.eval()
sd = model.state_dict()
clone = nn.Sequential(
    OrderedDict(
        [
            ("fc1", nn.Linear(4, 16)),
            ("act", nn.ReLU()),
            ("drop", nn.Dropout(p=0.3)),
            ("fc2", nn.Linear(16, 3)),
        ]
    )
)
missing = clone.load_state_dict(sd)
clone.eval()
with torch.no_grad():
    out1, out2 = model(X), clone(X)
probs = F.softmax(out1, dim=-1)
results = {
    "losses": losses[::5],
    "norms": norms[::5],
    "keys": list(sd.keys()),
    "same": torch.equal(out1, out2),
    "probs_row": probs[0],
    "pred": probs.argmax(dim=1)[:10],
    "training": training,
    "eval_training": model.training,
    "fc1_shape": list(model.fc1.weight.shape),
    "indexed": isinstance(model[0], nn.Linear),
    "len": len(model),
    "missing": list(missing.missing_keys),
    "unexpected": list(missing.unexpected_keys),
    "onehot": F.one_hot(y[:5], num_classes=3),
    "onehot_auto": list(F.one_hot(torch.tensor([0, 2])).shape),
    "nparams": sum(p.numel() for p in model.parameters() if p.requires_grad),
    "grad_none_after": all(p.grad is not None for p in model.parameters()),
    "ce_sum": F.cross_entropy(out1, y, reduction="sum").item(),
    "nll": F.nll_loss(F.log_softmax(out1, 1), y).item(),
    "ce_weight": F.cross_entropy(out1, y, weight=torch.tensor([1.0, 2.0, 0.5])).item(),
    "ce_ignore": F.cross_entropy(out1, torch.where(y == 1, -100, y)).item(),
}
