"""torch.autograd.functional: jacobian, hessian, vjp, jvp, hvp and vhp, single and tuple inputs."""
import torch
from torch.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp


def f(x):
    return torch.stack([x[0] * x[1], torch.sin(x[2]) + x[0] ** 2, x.exp().sum()])


def g(a, b):
    return (a * b).sum() + (a ** 3).sum() * b[0]


def two_out(a, b):
    return a * 2 + b, (a * b).sum()


x = torch.tensor([0.5, -1.0, 2.0])
a = torch.tensor([1.0, 2.0])
b = torch.tensor([0.5, -0.5])
v3 = torch.tensor([1.0, 0.5, -2.0])
results = {
    "jacobian": jacobian(f, x),
    "jacobian_tuple": [t for t in jacobian(g, (a, b))],
    "jacobian_two_out": [[t for t in row] for row in jacobian(two_out, (a, b))],
    "hessian": hessian(lambda z: (z ** 3).sum() + z[0] * z[1] * z[2], x),
    "hessian_tuple": [[t for t in row] for row in hessian(g, (a, b))],
    "vjp": list(vjp(f, x, v3)),
    "vjp_scalar": list(vjp(lambda z: (z ** 2).sum(), x)),
    "jvp": list(jvp(f, x, v3)),
    "hvp": list(hvp(lambda z: (z ** 4).sum() * z[0], x, v3)),
    "vhp": list(vhp(lambda z: (z ** 4).sum() * z[0], x, v3)),
    "vhp_tuple": [vhp(g, (a, b), (a, b))[0], list(vhp(g, (a, b), (a, b))[1])],
    "jac_requires_grad": jacobian(f, x).requires_grad,
    "jac_create_graph": jacobian(f, x.clone().requires_grad_(), create_graph=True).requires_grad,
    "zeros_for_unused": jacobian(lambda p, q: p * 2, (a, b))[1],
}
try:
    jacobian(lambda p, q: p * 2, (a, b), strict=True)
    results["strict"] = "no error"
except RuntimeError:
    results["strict"] = "RuntimeError"
