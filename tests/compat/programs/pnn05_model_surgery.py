"""Model surgery as in fine-tuning recipes: replace a network's classifier by assignment, take the feature
extractor with Sequential(*list(model.children())[:-1]), freeze it with requires_grad_(False), train a new
head on the filtered parameters, load a partial state_dict with strict=False, and inspect named_modules,
get_submodule and the optimizer's state_dict."""
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x):
        return torch.relu(x + self.bn(self.conv(x)))


class TinyResNet(nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        self.stem = nn.Conv2d(1, 4, 3, padding=1)
        self.layer1 = Block(4)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(4, classes)

    def forward(self, x):
        return self.fc(self.flatten(self.pool(self.layer1(self.stem(x)))))


def fill(module, rng):
    with torch.no_grad():
        for name, p in module.named_parameters():
            if ".bn." not in name and not name.startswith("bn"):
                p.copy_(torch.tensor(rng.uniform(-0.5, 0.5, size=tuple(p.shape)).astype(np.float32)))


rng = np.random.default_rng(4)
model = TinyResNet()
fill(model, rng)
model.fc = nn.Linear(4, 2)                      # new classifier, same position among the children
fill(model.fc, rng)
order = [name for name, _ in model.named_children()]
backbone = nn.Sequential(*list(model.children())[:-1])
backbone.requires_grad_(False)
head = nn.Sequential(OrderedDict([("hidden", nn.Linear(4, 3)), ("act", nn.Tanh()), ("out", nn.Linear(3, 2))]))
fill(head, rng)
net = nn.Sequential(backbone, head)
trainable = [p for p in net.parameters() if p.requires_grad]
optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, net.parameters()), lr=0.05)
x = torch.tensor(rng.standard_normal((6, 1, 5, 5)).astype(np.float32))
y = torch.tensor([0, 1, 1, 0, 1, 0])
losses = []
net.train()
for _ in range(4):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(net(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

copy = TinyResNet(classes=2)
result = copy.load_state_dict({k: v for k, v in model.state_dict().items() if not k.startswith("fc.")}, strict=False)
net.eval()
with torch.no_grad():
    out = net(x)
results = {
    "order": order, "backbone_children": [type(m).__name__ for m in backbone],
    "n_trainable": len(trainable), "losses": losses, "out": out,
    "frozen_grad_is_none": all(p.grad is None for p in backbone.parameters()),
    "missing": result.missing_keys, "unexpected": result.unexpected_keys,
    "modules": [name for name, _ in net.named_modules()][:8],
    "bn_type": type(net.get_submodule("0.1.bn")).__name__,
    "opt_state_keys": sorted(optimizer.state_dict()["state"]),
    "copied_stem": torch.equal(copy.stem.weight, model.stem.weight),
}
