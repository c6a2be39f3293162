"""A mixed-precision training loop in the style of the AMP recipe, run where the device has no
lower-precision path: autocast(enabled=use_amp) and GradScaler(enabled=use_amp) with use_amp False pass
through; then a GradScaler with real loss scaling on the CPU (unscale_, clipping, inf skipping, update)."""

import numpy as np
import torch
import torch.nn as nn

use_amp = False
device = "cpu"
backend_flags = [torch.backends.mps.is_available(), torch.backends.cudnn.enabled]
torch.backends.cudnn.benchmark = True
torch.cuda.manual_seed_all(0)

rng = np.random.default_rng(4)
net = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2))
with torch.no_grad():
    for p in net.parameters():
        p.copy_(torch.from_numpy(rng.normal(0, 0.3, size=tuple(p.shape)).astype(np.float32)))
data = torch.from_numpy(rng.normal(size=(4, 10, 6)).astype(np.float32))
targets = torch.from_numpy(rng.normal(size=(4, 10, 2)).astype(np.float32))
opt = torch.optim.SGD(net.parameters(), lr=0.05)
scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
loss_fn = nn.MSELoss()
losses = []
for _epoch in range(2):
    for inp, tgt in zip(data, targets, strict=True):
        with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=use_amp):
            output = net(inp)
            loss = loss_fn(output, tgt)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
    losses.append(loss.item())

scaler2 = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=2)
scales, steps = [], []
for i, (inp, tgt) in enumerate(zip(data, targets, strict=True)):
    loss = loss_fn(net(inp), tgt)
    if i == 2:
        loss = loss * float("inf")
    scaler2.scale(loss).backward()
    scaler2.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)
    before = net[0].weight.detach().clone()
    scaler2.step(opt)
    scaler2.update()
    steps.append(not bool(torch.equal(before, net[0].weight.detach())))
    scales.append(scaler2.get_scale())
    opt.zero_grad()

results = {
    "losses": losses,
    "backend_flags": backend_flags,
    "scale_disabled": scaler.get_scale(),
    "scales": scales,
    "stepped": steps,
    "state": scaler2.state_dict(),
    "weight_sum": net[0].weight.sum().item(),
}
