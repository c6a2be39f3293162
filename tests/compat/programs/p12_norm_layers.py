"""BatchNorm1d (momentum None, eval mode, no running stats, no affine), LayerNorm and GroupNorm, with grads."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(12)
x2 = torch.tensor(rng.normal(2.0, 3.0, size=(10, 5)), dtype=torch.float32, requires_grad=True)
x3 = torch.tensor(rng.normal(size=(4, 5, 7)), dtype=torch.float32)
results = {}

bn = nn.BatchNorm1d(5, momentum=None)
with torch.no_grad():
    bn.weight.copy_(torch.tensor([1.0, 2.0, 0.5, 1.5, -1.0]))
    bn.bias.copy_(torch.tensor([0.0, 0.1, 0.2, -0.3, 0.4]))
for i in range(3):
    y = bn(x2 * (i + 1))
results["cumulative_mean"] = bn.running_mean
results["cumulative_var"] = bn.running_var
results["tracked"] = bn.num_batches_tracked.item()
y.pow(3).sum().backward()
results["bn_x_grad"] = x2.grad[:3]
results["bn_w_grad"] = bn.weight.grad
bn.eval()
results["bn_eval"] = bn(x2[:2]).detach()

bn3 = nn.BatchNorm1d(5, affine=False, track_running_stats=False)
results["bn_3d"] = bn3(x3)[0, :2]
bn3.eval()
results["bn_no_stats_eval_uses_batch"] = bn3(x3)[1, :2]
results["bn_params"] = [len(list(bn3.parameters())), len(list(bn3.buffers()))]
results["functional_bn"] = F.batch_norm(x3, torch.zeros(5), torch.ones(5), training=False)[0, 0]

ln = nn.LayerNorm([5, 7])
with torch.no_grad():
    ln.weight.copy_(torch.tensor(rng.normal(size=(5, 7))))
x3g = x3.clone().requires_grad_()
out = ln(x3g)
(out * torch.arange(7.0)).sum().backward()
results["ln"] = out[0, 0]
results["ln_grad"] = x3g.grad[0, 0]
results["ln_w_grad"] = ln.weight.grad[0]
results["f_layer_norm"] = F.layer_norm(x3, (7,), eps=1e-3)[1, 1]

gn = nn.GroupNorm(1, 5)
gn5 = nn.GroupNorm(5, 5, affine=False)
x4 = torch.tensor(rng.normal(size=(2, 5, 3, 2)), dtype=torch.float32, requires_grad=True)
g = gn(x4) + gn5(x4)
g.sum().backward()
results["gn"] = g[0, 0]
results["gn_grad"] = x4.grad[1, 2]
results["f_group_norm"] = F.group_norm(x3, 5)[0, 0]
