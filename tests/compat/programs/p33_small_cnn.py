"""A small CNN: Conv2d, MaxPool2d, BatchNorm2d, Flatten, AdaptiveAvgPool2d, a training step, eval mode."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.gap = nn.AdaptiveAvgPool2d((1, 1))
        self.flat = nn.Flatten()
        self.fc = nn.Linear(8, 2)

    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.conv1(x))))
        x = F.relu(self.conv2(x))
        x = self.flat(self.gap(x))
        return self.fc(x)


rng = np.random.default_rng(33)
net = Net()
with torch.no_grad():
    for p in net.parameters():
        p.copy_(torch.from_numpy(rng.normal(scale=0.2, size=tuple(p.shape)).astype(np.float32)))
images = torch.tensor(rng.normal(size=(6, 1, 8, 8)), dtype=torch.float32)
labels = torch.tensor([0, 1, 1, 0, 1, 0])
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
losses = []
for _ in range(5):
    opt.zero_grad()
    loss = nn.CrossEntropyLoss()(net(images), labels)
    loss.backward()
    opt.step()
    losses.append(loss.item())
net.eval()
with torch.no_grad():
    out = net(images)
results = {
    "losses": losses,
    "eval_out": out,
    "running_mean": net.bn.running_mean,
    "running_var": net.bn.running_var,
    "num_batches": net.bn.num_batches_tracked.item(),
    "conv_out": list(net.conv1(images).shape),
    "pool": F.max_pool2d(images[:1], 2)[0, 0, 0],
    "avg": F.avg_pool2d(images[:1], kernel_size=2).sum().item(),
    "conv_fn": F.conv2d(images[:1], net.conv1.weight, net.conv1.bias, padding=1).sum().item(),
    "stride_conv": list(nn.Conv2d(1, 2, 3, stride=2, padding=1)(images).shape),
    "n_params": sum(p.numel() for p in net.parameters()),
    "pred": out.argmax(1),
}
