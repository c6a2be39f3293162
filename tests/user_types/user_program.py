"""A user's program, type-checked strictly in CI (.ci/run runs mypy --strict on this file): the generated stubs
must type ops, methods, dunders, factories, nn and optim with no error and no `Any` where a Tensor is meant."""

import generated as G

G.manual_seed(0)
x: G.Tensor = G.randn(32, 64)
w = G.randn(64, 10, requires_grad=True)
loss = (x @ w).relu().sum()
loss.backward()
grad: G.Tensor | None = w.grad
y = G.add(x, x, alpha=2) * 0.5 + 1
z = x.sum(dim=1, keepdim=True).view(-1).to(G.float64)
n: int = x.dim()
scaled = G.mul(x, 3) - G.tensor([1.0, 2.0]).mean()
with G.no_grad():
    doubled = x * 2
model = G.nn.Sequential(G.nn.Linear(64, 10), G.nn.ReLU())
out = model(x)
opt = G.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
step_loss = G.nn.functional.cross_entropy(out, G.randint(0, 10, (32,)))
opt.zero_grad()
step_loss.backward()
opt.step()
value: float = float(step_loss.item())
print(n, value, y.shape, z.dtype, scaled.shape, doubled.shape, grad is not None)
