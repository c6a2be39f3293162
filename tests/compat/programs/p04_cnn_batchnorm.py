"""A small CNN with Conv2d, BatchNorm2d, AvgPool2d, AdaptiveAvgPool2d and Flatten; train a few steps, then eval."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def fill_(model, seed, scale=0.3):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in model.named_parameters():
            p.copy_(torch.tensor(rng.uniform(-scale, scale, size=tuple(p.shape))))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.pool = nn.AvgPool2d(2)
        self.conv2 = nn.Conv2d(4, 6, 3)
        self.gap = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(6, 2)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = F.relu(self.conv2(x))
        x = torch.flatten(self.gap(x), 1)
        return self.fc(x)


rng = np.random.default_rng(4)
x = torch.tensor(rng.normal(size=(8, 1, 8, 8)), dtype=torch.float32)
y = torch.tensor([0, 1, 0, 1, 1, 0, 0, 1])
net = Net()
fill_(net, 40)
opt = torch.optim.SGD(net.parameters(), lr=0.05)
losses = []
for _ in range(5):
    opt.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())

net.eval()
with torch.no_grad():
    out = net(x[:3])
    pooled = F.adaptive_avg_pool2d(x[:1], (3, 5))
results = {"losses": losses, "running_mean": net.bn1.running_mean, "running_var": net.bn1.running_var,
           "num_batches_tracked": net.bn1.num_batches_tracked.item(), "eval_out": out, "adaptive": pooled,
           "training_flags": [m.training for m in net.modules()]}
