"""An automatic-mixed-precision training loop as the AMP recipe writes it, on whatever device there is:
torch.autocast(device_type=device, dtype=amp_dtype) around forward and loss, GradScaler(enabled=
torch.cuda.is_available()), unscale_ before clip_grad_norm_, scaler.step / update; forward hooks record the
dtype each layer produced, a nested autocast(enabled=False) block computes a float32 regulariser, and a
float32 twin trained alongside checks that mixed precision changes the numbers only slightly. The CPU run
uses float16, a lower-precision path both libraries have on the CPU."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"
amp_dtype = torch.float16
rng = np.random.default_rng(9)


def dtype_name(t):
    return str(t.dtype).split(".")[-1]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.norm = nn.LayerNorm([4, 5, 5])
        self.fc1 = nn.Linear(4 * 5 * 5, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        x = F.relu(self.conv(x))
        x = self.norm(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def make():
    net = Net()
    return net


model, twin = make().to(device), make().to(device)
with torch.no_grad():
    for p, q in zip(model.parameters(), twin.parameters(), strict=False):
        w = torch.from_numpy(rng.normal(0, 0.2, size=tuple(p.shape)).astype(np.float32))
        p.copy_(w)
        q.copy_(w)

seen = {}


def record(name):
    def hook(module, inputs, output):
        seen.setdefault(name, dtype_name(output))
    return hook


for name, module in model.named_children():
    module.register_forward_hook(record(name))

opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
opt_twin = torch.optim.SGD(twin.parameters(), lr=0.05, momentum=0.9)
scaler = torch.amp.GradScaler(device, enabled=torch.cuda.is_available())
xs = torch.from_numpy(rng.normal(size=(4, 6, 2, 5, 5)).astype(np.float32)).to(device)
ys = torch.from_numpy(rng.integers(0, 3, size=(4, 6))).to(device)

losses, twin_losses, dtypes = [], [], []
for step in range(4):
    x, y = xs[step], ys[step]
    opt.zero_grad(set_to_none=True)
    with torch.autocast(device_type=device, dtype=amp_dtype):
        out = model(x)
        loss = F.cross_entropy(out, y)
        probs = torch.softmax(out.float(), dim=1)
        with torch.autocast(device_type=device, enabled=False):
            reg = 1e-3 * sum((p.float() ** 2).sum() for p in model.parameters())
        total = loss + reg
        dtypes.append([dtype_name(out), dtype_name(loss), dtype_name(probs), dtype_name(reg), dtype_name(total),
                       torch.is_autocast_enabled(device)])
    scaler.scale(total).backward()
    scaler.unscale_(opt)
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
    scaler.step(opt)
    scaler.update()
    losses.append(total.item())

    opt_twin.zero_grad()
    out_t = twin(x)
    loss_t = F.cross_entropy(out_t, y) + 1e-3 * sum((p ** 2).sum() for p in twin.parameters())
    loss_t.backward()
    torch.nn.utils.clip_grad_norm_(twin.parameters(), 5.0)
    opt_twin.step()
    twin_losses.append(loss_t.item())

close = [abs(a - b) < 0.05 for a, b in zip(losses, twin_losses, strict=False)]
weights_close = all(bool(torch.allclose(p, q, atol=0.02))
                    for p, q in zip(model.parameters(), twin.parameters(), strict=False))
results = {
    "layer_dtypes": seen,
    "dtypes": dtypes,
    "grad_dtypes": sorted({dtype_name(p.grad) for p in model.parameters()}),
    "param_dtypes": sorted({dtype_name(p) for p in model.parameters()}),
    "losses_close_to_fp32": close,
    "max_loss_gap_below_0.05": max(abs(a - b) for a, b in zip(losses, twin_losses, strict=False)) < 0.05,
    "weights_close_to_fp32": weights_close,
    "scaler_enabled": scaler.is_enabled(),
    "autocast_after": torch.is_autocast_enabled(device),
}
