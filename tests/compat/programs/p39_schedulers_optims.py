"""Optimizers and schedulers: param groups, get_last_lr, StepLR/MultiStepLR/ExponentialLR/CosineAnnealingLR,
optimizer.param_groups edits, AdamW, RMSprop, Adagrad, state_dict of the optimizer."""

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(2, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.3, -0.2]]))
    model.bias.fill_(0.1)
x = torch.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
y = torch.tensor([[1.0], [0.0], [2.0]])


def run(opt_cls, sched_fn, steps=8, **kw):
    m = nn.Linear(2, 1)
    m.load_state_dict(model.state_dict())
    opt = opt_cls(m.parameters(), **kw)
    sched = sched_fn(opt) if sched_fn else None
    lrs = []
    for _ in range(steps):
        opt.zero_grad()
        nn.functional.mse_loss(m(x), y).backward()
        opt.step()
        if sched:
            sched.step()
            lrs.append(sched.get_last_lr()[0])
    return m.weight.detach().flatten().tolist() + [m.bias.item()], lrs


sched = torch.optim.lr_scheduler
results = {
    "sgd_step": run(torch.optim.SGD, lambda o: sched.StepLR(o, step_size=3, gamma=0.5), lr=0.1),
    "multistep": run(torch.optim.SGD, lambda o: sched.MultiStepLR(o, milestones=[2, 5], gamma=0.1), lr=0.1),
    "exp": run(torch.optim.SGD, lambda o: sched.ExponentialLR(o, gamma=0.9), lr=0.1, momentum=0.5, nesterov=True),
    "cos": run(torch.optim.Adam, lambda o: sched.CosineAnnealingLR(o, T_max=8, eta_min=0.001), lr=0.05),
    "lambda": run(torch.optim.AdamW, lambda o: sched.LambdaLR(o, lambda e: 1.0 / (e + 1)), lr=0.05, weight_decay=0.1),
    "rmsprop": run(torch.optim.RMSprop, None, lr=0.01, alpha=0.9),
    "adagrad": run(torch.optim.Adagrad, None, lr=0.1),
}
opt = torch.optim.SGD([{"params": [model.weight]}, {"params": [model.bias], "lr": 0.01}], lr=0.1, momentum=0.9)
nn.functional.mse_loss(model(x), y).backward()
opt.step()
for group in opt.param_groups:
    group["lr"] *= 0.5
sd = opt.state_dict()
results.update(
    {
        "group_lrs": [g["lr"] for g in opt.param_groups],
        "n_groups": len(sd["param_groups"]),
        "state_keys": sorted(sd["state"].keys()),
        "momentum_buf": sd["state"][0]["momentum_buffer"],
        "weight": model.weight,
        "defaults_lr": opt.defaults["lr"],
    }
)
