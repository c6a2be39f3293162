"""A CNN classifier in the style of the MNIST example, with BatchNorm, dropout off, nesterov SGD and
OneCycleLR stepped per batch, a second group on the head, gradient clipping by value; then eval-mode
accuracy, the lr/momentum trace and a scheduler state_dict round trip."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.dropout1 = nn.Dropout(0.0)
        self.fc1 = nn.Linear(8 * 2 * 2, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout1(torch.flatten(x, 1))
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


rng = np.random.default_rng(2)
model = Net()
with torch.no_grad():
    for name, p in model.named_parameters():
        if not name.startswith("bn"):
            p.copy_(torch.tensor(rng.uniform(-0.3, 0.3, size=tuple(p.shape)).astype(np.float32)))
images = torch.tensor(rng.standard_normal((4, 6, 1, 8, 8)).astype(np.float32))
labels = torch.tensor(rng.integers(0, 3, size=(4, 6)))
head = list(model.fc2.parameters())
body = [p for n, p in model.named_parameters() if not n.startswith("fc2")]
optimizer = torch.optim.SGD([{"params": body}, {"params": head, "lr": 0.05}], lr=0.1, momentum=0.9,
                            nesterov=True, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=[0.2, 0.1], epochs=3, steps_per_epoch=4)
trace, losses = [], []
for epoch in range(3):
    model.train()
    for batch in range(4):
        optimizer.zero_grad()
        loss = F.nll_loss(model(images[batch]), labels[batch])
        loss.backward()
        torch.nn.utils.clip_grad_value_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        trace.append([g["lr"] for g in optimizer.param_groups] + [optimizer.param_groups[0]["momentum"]])
    if epoch == 1:
        saved = scheduler.state_dict()
model.eval()
with torch.no_grad():
    out = model(images.view(-1, 1, 8, 8))
    accuracy = (out.argmax(1) == labels.view(-1)).float().mean()
fresh = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=[0.2, 0.1], epochs=3, steps_per_epoch=4)
fresh.load_state_dict(saved)
results = {"losses": losses, "trace": trace, "accuracy": accuracy, "running_mean": model.bn1.running_mean,
           "resumed_last_epoch": fresh.last_epoch, "resumed_total": fresh.total_steps}
