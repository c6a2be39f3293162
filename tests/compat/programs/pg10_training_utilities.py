"""Training utilities as modern training scripts use them: a custom parametrization (a symmetric weight)
through nn.utils.parametrize, weight_norm from nn.utils.parametrizations, activation checkpointing with
torch.utils.checkpoint.checkpoint(use_reentrant=False), gradient accumulation over micro-batches, an EMA of
the weights with swa_utils.AveragedModel(multi_avg_fn=get_ema_multi_avg_fn(...)), clip_grad_value_,
parameters_to_vector, and a checkpoint dict written to and read back from an io.BytesIO."""

import io

import numpy as np
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils import parameters_to_vector
from torch.nn.utils.parametrizations import weight_norm
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
from torch.utils.checkpoint import checkpoint

rng = np.random.default_rng(31)


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.act = nn.Tanh()

    def forward(self, x):
        return x + self.act(self.lin(x))


class Net(nn.Module):
    def __init__(self, d=5):
        super().__init__()
        self.inp = nn.Linear(3, d)
        self.block1 = Block(d)
        self.block2 = Block(d)
        self.out = nn.Linear(d, 1)

    def forward(self, x):
        x = self.inp(x)
        x = checkpoint(self.block1, x, use_reentrant=False)
        x = checkpoint(self.block2, x, use_reentrant=False)
        return self.out(x)


model = Net()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.normal(0, 0.4, size=tuple(p.shape)).astype(np.float32)))
parametrize.register_parametrization(model.block1.lin, "weight", Symmetric())
model.out = weight_norm(model.out)
w_sym = model.block1.lin.weight
is_symmetric = bool(torch.allclose(w_sym, w_sym.T))
param_names = sorted(n for n, _ in model.named_parameters())

ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
x = torch.from_numpy(rng.normal(size=(4, 8, 3)).astype(np.float32))
y = torch.from_numpy(rng.normal(size=(4, 8, 1)).astype(np.float32))
accum = 2
losses = []
for step in range(4):
    opt.zero_grad()
    for micro in range(accum):
        xb, yb = x[step, micro * 4:(micro + 1) * 4], y[step, micro * 4:(micro + 1) * 4]
        loss = nn.functional.mse_loss(model(xb), yb) / accum
        loss.backward()
        losses.append(loss.item())
    torch.nn.utils.clip_grad_value_(model.parameters(), 0.5)
    opt.step()
    ema.update_parameters(model)

buffer = io.BytesIO()
torch.save({"model": model.state_dict(), "ema": ema.state_dict(), "optimizer": opt.state_dict(), "step": 4}, buffer)
buffer.seek(0)
ckpt = torch.load(buffer, weights_only=True)
restored = Net()
parametrize.register_parametrization(restored.block1.lin, "weight", Symmetric())
restored.out = weight_norm(restored.out)
missing = restored.load_state_dict(ckpt["model"])
with torch.no_grad():
    same_output = bool(torch.allclose(restored(x[0]), model(x[0])))
    ema_out = ema(x[0])

results = {
    "is_symmetric": is_symmetric,
    "param_names": param_names,
    "losses": losses,
    "vector": parameters_to_vector(model.parameters()),
    "ema_out": ema_out,
    "n_averaged": ema.n_averaged.item(),
    "ckpt_keys": sorted(ckpt["model"].keys()),
    "ckpt_step": ckpt["step"],
    "load_result": [list(missing.missing_keys), list(missing.unexpected_keys)],
    "same_output": same_output,
    "still_symmetric": bool(torch.allclose(model.block1.lin.weight, model.block1.lin.weight.T)),
}
