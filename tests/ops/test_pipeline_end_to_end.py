"""The skeleton ops through the whole pipeline: functions, methods, operators, gradients (NumPy oracle)."""

from __future__ import annotations

import numpy as np
import pytest

import generated as G

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((3, 4))
M = rng.standard_normal((4, 5))


def t(x: np.ndarray, grad: bool = False) -> G.Tensor:
    return G.tensor(x, dtype=G.float64, requires_grad=grad)


@pytest.mark.parametrize("name, fn, ref", [
    ("add", lambda a, b: G.add(a, b, alpha=2), lambda a, b: a + 2 * b),
    ("add method", lambda a, b: a.add(b), lambda a, b: a + b),
    ("+", lambda a, b: a + b, lambda a, b: a + b),
    ("scalar +", lambda a, b: a + 1.5, lambda a, b: a + 1.5),
    ("reflected -", lambda a, b: 2 - a, lambda a, b: 2 - a),
    ("*", lambda a, b: a * b, lambda a, b: a * b),
    ("mul", lambda a, b: G.mul(a, b), lambda a, b: a * b),
    ("neg", lambda a, b: -a, lambda a, b: -a),
    ("exp", lambda a, b: G.exp(a), np.exp),
    ("exp method", lambda a, b: a.exp(), lambda a, b: np.exp(a)),
    ("relu", lambda a, b: G.relu(a), lambda a, b: np.maximum(a, 0)),
    ("sum", lambda a, b: G.sum(a), lambda a, b: np.sum(a)),
    ("sum dim", lambda a, b: a.sum(dim=1, keepdim=True), lambda a, b: a.sum(1, keepdims=True)),
    ("sum dims", lambda a, b: a.sum((0, 1)), lambda a, b: a.sum((0, 1))),
])
def test_values(name: str, fn, ref) -> None:
    out = fn(t(A), t(B))
    expected = ref(A, B) if name not in ("exp",) else ref(A)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)


def test_matrix_products() -> None:
    np.testing.assert_allclose((t(A) @ t(M)).numpy(), A @ M)
    np.testing.assert_allclose(G.mm(t(A), t(M)).numpy(), A @ M)
    np.testing.assert_allclose(G.matmul(t(A), t(M)).numpy(), A @ M)
    v = rng.standard_normal(4)
    np.testing.assert_allclose(G.matmul(t(A), t(v)).numpy(), A @ v)
    np.testing.assert_allclose(G.matmul(t(v), t(M)).numpy(), v @ M)
    np.testing.assert_allclose(G.matmul(t(v), t(v)).numpy(), v @ v)
    batch = rng.standard_normal((2, 3, 4))
    np.testing.assert_allclose(G.matmul(t(batch), t(M)).numpy(), batch @ M)
    np.testing.assert_allclose((t(batch) @ t(rng.standard_normal((2, 4, 5)))).numpy().shape, (2, 3, 5))


def test_gradients_match_numpy() -> None:
    a, b, m = t(A, True), t(B, True), t(M, True)
    loss = ((a * b + a).relu() @ m).exp().sum()
    loss.backward()
    pre = A * B + A
    h = np.maximum(pre, 0)
    e = np.exp(h @ M)
    dh = e @ M.T
    dpre = dh * (pre > 0)
    np.testing.assert_allclose(m.grad.numpy(), h.T @ e, rtol=1e-10)
    np.testing.assert_allclose(a.grad.numpy(), dpre * (B + 1), rtol=1e-10)
    np.testing.assert_allclose(b.grad.numpy(), dpre * A, rtol=1e-10)


@pytest.mark.parametrize("fn", [
    lambda a, b: G.add(a, b, alpha=-0.5), lambda a, b: a * b, lambda a, b: -G.exp(a),
    lambda a, b: (a @ b.t()).sum(dim=0), lambda a, b: G.matmul(a, b.t()).relu(),
    lambda a, b: (a + b.sum(0)).sum(1, keepdim=True),
])
def test_gradcheck(fn) -> None:
    assert G.autograd.gradcheck(fn, (t(A, True), t(B, True)))


def test_broadcast_gradient_is_reduced_to_input_shape() -> None:
    a, row = t(A, True), t(B[0], True)
    (a * row).sum().backward()
    np.testing.assert_allclose(row.grad.numpy(), A.sum(0))


@pytest.mark.parametrize("expr, dtype", [
    (lambda x: x + 2.5, G.float32), (lambda x: x * 1.5, G.float32), (lambda x: x + 1, G.int64),
    (lambda x: x / 2, G.float32), (lambda x: x ** 2, G.int64), (lambda x: x ** 0.5, G.float32),
    (lambda x: x > 1.5, G.bool), (lambda x: G.add(x, 1, alpha=2), G.int64),
    (lambda x: x.to(G.float16) * 2.5, G.float16), (lambda x: x.to(G.float16) + G.tensor(2.5), G.float16),
])
def test_python_scalars_promote_as_wrapped_numbers(expr, dtype) -> None:
    assert expr(G.tensor([1, 2, 3])).dtype is dtype


def test_broadcast_failure_names_both_shapes() -> None:
    with pytest.raises(RuntimeError, match=r"add: shapes \[2, 3\] and \[4\] cannot be broadcast"):
        G.add(G.zeros(2, 3), G.zeros(4))


def test_non_tensor_argument_is_named() -> None:
    with pytest.raises(TypeError, match=r"mm\(\): argument 'mat2' must be Tensor or a number, not str"):
        G.mm(G.zeros(2, 2), "s")
