"""Autograd tricks: autograd.grad with create_graph, second derivatives, retain_graph, grad accumulation,
hooks on tensors, retain_grad, detach_, torch.enable_grad inside no_grad, set_grad_enabled."""

import torch

x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = (x**3).sum()
(g,) = torch.autograd.grad(y, x, create_graph=True)
(g2,) = torch.autograd.grad(g.sum(), x)
z = (x * x).sum()
z.backward(retain_graph=True)
first = x.grad.clone()
z.backward()
accumulated = x.grad.clone()
x.grad.zero_()
seen = []
h = x.register_hook(lambda grad: seen.append(grad.tolist()) or grad * 10)
(x.sin()).sum().backward()
h.remove()
hooked = x.grad.clone()
mid = x * 2
mid.retain_grad()
(mid**2).sum().backward()
with torch.no_grad():
    with torch.enable_grad():
        inner = (x * 3).sum()
    outer = x * 3
with torch.set_grad_enabled(False):
    off = x * 2
w = torch.ones(2, requires_grad=True)
loss = (w * torch.tensor([3.0, 4.0])).sum()
gw = torch.autograd.grad(loss, [w], grad_outputs=torch.tensor(2.0))[0]
v = torch.tensor([1.0, 2.0], requires_grad=True)
out = v * 3
out.backward(torch.tensor([1.0, 0.5]))
u = torch.tensor([1.0, 2.0], requires_grad=True)
d = u.detach()
d.add_(1)
results = {
    "g": g,
    "g2": g2,
    "first": first,
    "accumulated": accumulated,
    "seen": seen,
    "hooked": hooked,
    "mid_grad": mid.grad,
    "inner_rg": inner.requires_grad,
    "outer_rg": outer.requires_grad,
    "off_rg": off.requires_grad,
    "gw": gw,
    "v_grad": v.grad,
    "shared_detach": u.tolist(),
    "grad_enabled": torch.is_grad_enabled(),
    "allow_unused": torch.autograd.grad((x * 2).sum(), [x, torch.ones(1, requires_grad=True)], allow_unused=True)[1]
    is None,
    "grad_fn_name": str((x * 2).grad_fn).split()[0],
    "grad_fn_type": type((x * x).grad_fn).__name__,
    "sum_fn": (x * 2).sum().grad_fn.name(),
    "next_fns": len((x * x + x).grad_fn.next_functions),
}
