"""Higher-order gradients with torch.autograd.grad(create_graph=True): a gradient penalty, Hessian-vector
products by double backward, and a third derivative."""
import torch
import torch.nn as nn

x = torch.tensor([0.3, -1.2, 2.0], requires_grad=True)
y = (x ** 3).sum() + (x[0] * x[1]) ** 2
(g,) = torch.autograd.grad(y, x, create_graph=True)
v = torch.tensor([1.0, 0.0, -1.0])
(hv,) = torch.autograd.grad(g, x, grad_outputs=v, create_graph=True)
(third,) = torch.autograd.grad(hv.sum(), x)

model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1))
inp = torch.tensor([[0.2, 0.4], [1.0, -1.0]], requires_grad=True)
out = model(inp)
(gi,) = torch.autograd.grad(out.sum(), inp, create_graph=True)
penalty = ((gi.norm(2, dim=1) - 1) ** 2).mean()
penalty.backward()
results = {"grad": g, "hvp": hv, "third": third, "input_grad": gi, "penalty": penalty.item(),
           "w0_grad": model[0].weight.grad, "grad_fn_set": g.grad_fn is not None}
