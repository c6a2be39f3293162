"""Every optimizer family on one small regression, as a hyper-parameter sweep script would run them:
Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop, Adafactor with schedulers (SequentialLR, ChainedScheduler,
CosineAnnealingWarmRestarts, CyclicLR), L-BFGS with a strong-Wolfe line search, and SWA with AveragedModel,
SWALR and update_bn; plus an optimizer state_dict round trip."""
import numpy as np
import torch
import torch.nn as nn
from torch.optim.swa_utils import SWALR, AveragedModel, update_bn

rng = np.random.default_rng(5)
X = torch.tensor(rng.standard_normal((32, 4)).astype(np.float32))
Y = torch.tensor((X.numpy() @ np.array([[1.0], [-2.0], [0.5], [0.0]], dtype=np.float32)) + 0.3)
W0 = [rng.uniform(-0.5, 0.5, size=s).astype(np.float32) for s in ((8, 4), (8,), (8,), (8,), (1, 8), (1,))]


def make_model():
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Tanh(), nn.Linear(8, 1))
    with torch.no_grad():
        for p, w in zip(model.parameters(), W0, strict=True):
            p.copy_(torch.tensor(w))
    return model


def train(opt_fn, sched_fn=None, steps=8):
    model = make_model()
    opt = opt_fn(model.parameters())
    sched = sched_fn(opt) if sched_fn else None
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(X), Y)
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        losses.append(loss.item())
    return losses


S = torch.optim.lr_scheduler
results = {
    "adadelta": train(lambda p: torch.optim.Adadelta(p, lr=1.0, weight_decay=0.01)),
    "adamax": train(lambda p: torch.optim.Adamax(p, lr=0.05),
                    lambda o: S.SequentialLR(o, [S.LinearLR(o, 0.2, total_iters=3), S.ExponentialLR(o, 0.9)], [3])),
    "nadam": train(lambda p: torch.optim.NAdam(p, lr=0.02, decoupled_weight_decay=True, weight_decay=0.1),
                   lambda o: S.ChainedScheduler([S.ConstantLR(o, 0.5, total_iters=2), S.ExponentialLR(o, 0.95)])),
    "radam": train(lambda p: torch.optim.RAdam(p, lr=0.05), lambda o: S.CosineAnnealingWarmRestarts(o, 3, 2)),
    "asgd": train(lambda p: torch.optim.ASGD(p, lr=0.05, t0=3)),
    "rprop": train(lambda p: torch.optim.Rprop(p, lr=0.01)),
    "adafactor": train(lambda p: torch.optim.Adafactor(p, lr=0.05)),
    "rmsprop_cyclic": train(lambda p: torch.optim.RMSprop(p, lr=0.01, momentum=0.9),
                            lambda o: S.CyclicLR(o, 0.001, 0.02, step_size_up=2)),
}

model = make_model()
lbfgs = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=15, history_size=5, line_search_fn="strong_wolfe")


def closure():
    lbfgs.zero_grad()
    loss = nn.functional.mse_loss(model(X), Y)
    loss.backward()
    return loss


results["lbfgs"] = [lbfgs.step(closure).item() for _ in range(2)]
results["lbfgs_evals"] = lbfgs.state[next(iter(model.parameters()))]["func_evals"]

model = make_model()
swa_model = AveragedModel(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
swa_sched = SWALR(opt, swa_lr=0.02, anneal_epochs=3)
for step in range(6):
    opt.zero_grad()
    nn.functional.mse_loss(model(X), Y).backward()
    opt.step()
    if step >= 2:
        swa_model.update_parameters(model)
        swa_sched.step()
update_bn([(X[:16], 0), (X[16:], 0)], swa_model)
swa_model.eval()
with torch.no_grad():
    results["swa_loss"] = nn.functional.mse_loss(swa_model(X), Y).item()
results["swa_n"] = swa_model.n_averaged
results["swa_running_var"] = swa_model.module[1].running_var

state = opt.state_dict()
opt2 = torch.optim.SGD(make_model().parameters(), lr=0.5)
opt2.load_state_dict(state)
results["loaded_lr"] = opt2.param_groups[0]["lr"]
results["loaded_keys"] = sorted(opt2.param_groups[0])
