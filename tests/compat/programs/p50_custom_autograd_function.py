"""Custom autograd Functions as in the "learning PyTorch with examples" tutorial (LegendrePolynomial3 fitting
sin(x)) and a clamp-with-straight-through-gradient Function with setup_context, plus a gradcheck."""

import math

import torch


class LegendrePolynomial3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


class StraightThroughClamp(torch.autograd.Function):
    @staticmethod
    def forward(x, lo, hi):
        return x.clamp(lo, hi)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, lo, hi = inputs
        ctx.lo, ctx.hi = lo, hi
        ctx.set_materialize_grads(True)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None, None


dtype = torch.float
x = torch.linspace(-math.pi, math.pi, 200, dtype=dtype)
y = torch.sin(x)
a = torch.full((), 0.0, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, dtype=dtype, requires_grad=True)
learning_rate = 5e-6
losses = []
for t in range(200):
    P3 = LegendrePolynomial3.apply
    y_pred = a + b * P3(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    if t % 40 == 39:
        losses.append(loss.item())
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

w = torch.tensor([-2.0, 0.5, 3.0], requires_grad=True)
out = StraightThroughClamp.apply(w, -1.0, 1.0)
(out * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
xd = torch.tensor([0.3, -0.2], dtype=torch.float64, requires_grad=True)
results = {
    "losses": losses,
    "coefficients": [a.item(), b.item(), c.item(), d.item()],
    "clamped": out.tolist(),
    "straight_through_grad": w.grad.tolist(),
    "grad_fn_name": type(out.grad_fn).__name__,
    "gradcheck": torch.autograd.gradcheck(LegendrePolynomial3.apply, (xd,)),
}
