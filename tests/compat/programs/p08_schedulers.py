"""The learning-rate schedulers: the lr sequence each produces, get_last_lr and state_dict."""
import torch
import torch.nn as nn
from torch.optim import lr_scheduler


def run(make, steps=12, metric=None):
    p = nn.Parameter(torch.zeros(2))
    opt = torch.optim.SGD([p], lr=0.5)
    sched = make(opt)
    lrs = [opt.param_groups[0]["lr"]]
    for i in range(steps):
        p.grad = torch.ones(2)
        opt.step()
        if metric is None:
            sched.step()
        else:
            sched.step(metric(i))
        lrs.append(opt.param_groups[0]["lr"])
    return lrs, sched.get_last_lr(), sched


results = {}
results["step"], results["step_last"], s = run(lambda o: lr_scheduler.StepLR(o, step_size=3, gamma=0.5))
results["step_state"] = {k: v for k, v in s.state_dict().items() if k in ("last_epoch", "base_lrs", "step_size")}
results["multistep"], _, _ = run(lambda o: lr_scheduler.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.1))
results["exponential"], _, _ = run(lambda o: lr_scheduler.ExponentialLR(o, gamma=0.9))
results["cosine"], _, _ = run(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=5, eta_min=0.01))
results["lambda"], _, _ = run(lambda o: lr_scheduler.LambdaLR(o, lr_lambda=lambda e: 1.0 / (1 + e)))
losses = [1.0, 0.9, 0.95, 0.96, 0.97, 0.98, 0.99, 0.5, 0.6, 0.7, 0.8, 0.9]
results["plateau"], results["plateau_last"], _ = run(
    lambda o: lr_scheduler.ReduceLROnPlateau(o, mode="min", factor=0.5, patience=2), metric=lambda i: losses[i])
results["plateau_max"], _, _ = run(
    lambda o: lr_scheduler.ReduceLROnPlateau(o, mode="max", factor=0.1, patience=1, cooldown=1, min_lr=0.001),
    metric=lambda i: -losses[i])

# two groups, one lambda each, and resuming from a state_dict
a, b = nn.Parameter(torch.zeros(1)), nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.1}], lr=1.0)
sched = lr_scheduler.LambdaLR(opt, [lambda e: 0.5 ** e, lambda e: e + 1])
for _ in range(3):
    opt.step()
    sched.step()
results["two_groups"] = sched.get_last_lr()
step_opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=1.0)
first = lr_scheduler.StepLR(step_opt, step_size=2, gamma=0.1)
for _ in range(3):
    step_opt.step()
    first.step()
state = first.state_dict()
opt2 = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=1.0)
second = lr_scheduler.StepLR(opt2, step_size=2, gamma=0.1)
second.load_state_dict(state)
opt2.step()
second.step()
results["resumed"] = [second.last_epoch, second.get_last_lr()[0]]
