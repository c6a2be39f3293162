"""Higher-order gradients: Newton's method on a small function with autograd.functional.hessian, jacobian of
a vector function, a gradient penalty (double backward through a network), and vjp/jvp."""

import torch
import torch.nn as nn
from torch.autograd.functional import hessian, jacobian, jvp, vjp


def f(v):
    return (v[0] - 1) ** 4 + (v[1] + 2) ** 2 + v[0] * v[1]


x = torch.tensor([0.5, 0.5])
path = []
for _ in range(5):
    xr = x.clone().requires_grad_(True)
    g = torch.autograd.grad(f(xr), xr)[0]
    H = hessian(f, x)
    x = x - torch.linalg.solve(H, g)
    path.append(x.tolist())


def g_vec(v):
    return torch.stack([v[0] * v[1], v[0].sin(), v.pow(2).sum()])


J = jacobian(g_vec, torch.tensor([1.0, 2.0]))
_, vj = vjp(g_vec, torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0, 1.0]))
_, jv = jvp(g_vec, torch.tensor([1.0, 2.0]), torch.tensor([0.5, -1.0]))
net = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1))
inp = torch.tensor([[0.3, -0.7], [1.0, 0.2]], requires_grad=True)
out = net(inp)
grads = torch.autograd.grad(out.sum(), inp, create_graph=True)[0]
penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
penalty.backward()
results = {
    "path": path,
    "hessian": hessian(f, torch.tensor([0.0, 0.0])),
    "J": J,
    "vjp": vj,
    "jvp": jv,
    "penalty": penalty.item(),
    "w_grad": net[0].weight.grad,
    "inp_grad": inp.grad,
}
