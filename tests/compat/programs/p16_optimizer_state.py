"""RMSprop (centered, momentum) and Adagrad: trajectories, param_groups, add_param_group, state_dict and resuming
from load_state_dict into a fresh optimizer (which must continue identically)."""
import numpy as np
import torch
import torch.nn as nn


def make_model():
    model = nn.Linear(3, 2)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.1, -0.2, 0.3], [0.4, 0.0, -0.1]]))
        model.bias.copy_(torch.tensor([0.05, -0.05]))
    return model


rng = np.random.default_rng(16)
x = torch.tensor(rng.normal(size=(16, 3)), dtype=torch.float32)
y = torch.tensor(rng.normal(size=(16, 2)), dtype=torch.float32)


def train(model, opt, steps):
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out


results = {}
for name, make in {
    "rmsprop": lambda p: torch.optim.RMSprop(p, lr=0.01),
    "rmsprop_centered_momentum": lambda p: torch.optim.RMSprop(p, lr=0.01, momentum=0.9, centered=True,
                                                               weight_decay=0.01),
    "adagrad": lambda p: torch.optim.Adagrad(p, lr=0.1, lr_decay=0.05, weight_decay=0.01),
    "adam_amsgrad": lambda p: torch.optim.Adam(p, lr=0.05, amsgrad=True),
    "adamw": lambda p: torch.optim.AdamW(p, lr=0.05),
    "sgd_nesterov": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True),
}.items():
    model = make_model()
    opt = make(model.parameters())
    first = train(model, opt, 5)
    state = opt.state_dict()
    model2 = make_model()
    model2.load_state_dict(model.state_dict())
    opt2 = make(model2.parameters())
    opt2.load_state_dict(state)
    cont1 = train(model, opt, 5)
    cont2 = train(model2, opt2, 5)
    results[name] = {"first": first, "continued": cont1, "resumed": cont2,
                     "state_keys": sorted(state["state"][0].keys()),
                     "group_keys_have_lr": "lr" in state["param_groups"][0],
                     "param_ids": state["param_groups"][0]["params"], "weight": model.weight.detach()}

model = make_model()
opt = torch.optim.SGD([model.weight], lr=0.1)
opt.add_param_group({"params": [model.bias], "lr": 0.01, "momentum": 0.5})
train(model, opt, 3)
results["groups"] = [(g["lr"], g["momentum"], len(g["params"])) for g in opt.param_groups]
results["two_groups_bias"] = model.bias.detach()
try:
    opt.add_param_group({"params": [model.bias]})
    results["dup_error"] = "none"
except ValueError:
    results["dup_error"] = "ValueError"
