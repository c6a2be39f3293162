"""G.compile of training graphs: a compiled function whose outputs require grad runs a compiled forward and
its outputs' `.backward()` runs a compiled backward (runtime/compile/training.py); every value and gradient
is compared with the same function run eagerly."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import generated as G
from runtime.compile.training import TrainingProgram

F = G.nn.functional


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def grads_of(fn: Callable[..., G.Tensor], args: tuple[Any, ...], params: list[G.Tensor],
             gradient: G.Tensor | None = None) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """The output and the gradients of `params` (and of the arguments that require grad) of one call."""
    leaves = params + [a for a in args if isinstance(a, G.Tensor) and a.requires_grad]
    for p in leaves:
        p.grad = None
    out = fn(*args)
    out.backward(gradient)
    grads = [None if p.grad is None else p.grad.numpy().copy() for p in leaves]
    for p in leaves:
        p.grad = None
    return out.detach().numpy().copy(), grads


def agree(fn: Callable[..., G.Tensor], args: tuple[Any, ...], params: list[G.Tensor], tol: float = 1e-5,
          calls: int = 2, gradient: G.Tensor | None = None) -> Any:
    """Compile `fn`, call it `calls` times against eager; returns the compiled function."""
    c = G.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fall back to eager fails the test
        for _ in range(calls):
            got, got_grads = grads_of(c, args, params, gradient)
            want, want_grads = grads_of(fn, args, params, gradient)
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
            for g, w in zip(got_grads, want_grads, strict=True):
                assert (g is None) == (w is None)
                if g is not None:
                    np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    (program,) = c.programs
    assert isinstance(program, TrainingProgram)
    return c


def test_mlp_with_cross_entropy_compiles_its_backward() -> None:
    l1, l2 = G.nn.Linear(8, 16), G.nn.Linear(16, 4)

    def loss(x: G.Tensor, y: G.Tensor) -> G.Tensor:
        return F.cross_entropy(l2(F.gelu(l1(x), approximate="tanh")), y)

    x, y = G.randn(5, 8), G.randint(0, 4, (5,))
    c = agree(loss, (x, y), list(l1.parameters()) + list(l2.parameters()), calls=3)
    (program,) = c.programs
    assert program.backward.fused, "the backward's pointwise runs are fused"
    assert "mm" in str(program.backward.graph)


@pytest.mark.parametrize("act", ["relu", "tanh", "sigmoid", "gelu"])
def test_activations_softmax_and_residuals(act: str) -> None:
    lin = G.nn.Linear(6, 6)

    def f(x: G.Tensor) -> G.Tensor:
        h = getattr(F, act)(lin(x)) + x
        return (F.softmax(h, dim=-1) * h).sum() + F.log_softmax(h, dim=0).mean()

    x = G.randn(4, 6, requires_grad=True)
    agree(f, (x,), list(lin.parameters()))


def test_layer_norm_and_a_transformer_block() -> None:
    d = 8
    ln1, ln2 = G.nn.LayerNorm(d), G.nn.LayerNorm(d)
    qkv, proj = G.nn.Linear(d, 3 * d), G.nn.Linear(d, d)
    up, down = G.nn.Linear(d, 2 * d), G.nn.Linear(2 * d, d)
    params = [p for m in (ln1, ln2, qkv, proj, up, down) for p in m.parameters()]

    def block(x: G.Tensor) -> G.Tensor:
        q, k, v = qkv(ln1(x)).chunk(3, dim=-1)
        att = F.softmax(q @ k.transpose(-2, -1) / d ** 0.5, dim=-1)
        x = x + proj(att @ v)
        return (x + down(F.gelu(up(ln2(x))))).pow(2).mean()

    agree(block, (G.randn(2, 5, d),), params, tol=1e-4)


def test_outputs_that_are_not_scalars_take_their_gradient() -> None:
    w = G.randn(3, 4, requires_grad=True)

    def f(x: G.Tensor) -> G.Tensor:
        return G.tanh(x @ w) * 2 + 1

    agree(f, (G.randn(5, 3),), [w], gradient=G.randn(5, 4))


def test_parameters_updated_between_calls_are_read_again() -> None:
    lin = G.nn.Linear(4, 3)

    def f(x: G.Tensor) -> G.Tensor:
        return F.relu(lin(x)).sum()

    c = G.compile(f)
    x = G.randn(6, 4)
    opt = G.optim.SGD(lin.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        got = c(x)
        got.backward()
        got_grad = lin.weight.grad.numpy().copy()
        lin.weight.grad = None
        want = f(x)
        want.backward()
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-6)
        np.testing.assert_allclose(got_grad, lin.weight.grad.numpy(), rtol=1e-5, atol=1e-6)
        opt.step()
    assert len(c.programs) == 1


def test_a_parameter_that_stops_requiring_grad_recompiles() -> None:
    w, b = G.randn(3, requires_grad=True), G.randn(3, requires_grad=True)
    c = G.compile(lambda x: (x * w + b).exp().sum())
    c(G.randn(3)).backward()
    (first,) = c.programs
    assert any(t is b for t in first.free_targets)
    b.requires_grad_(False)
    w.grad = b.grad = None
    x = G.randn(3)
    c(x).backward()
    assert b.grad is None
    np.testing.assert_allclose(w.grad.numpy(), (x * w + b).exp().detach().numpy() * x.numpy(), rtol=1e-5)
    # the guard on the closure's tensors (their requires_grad) keys a second program beside the first
    first_again, second = c.programs
    assert first_again is first and not any(t is b for t in second.free_targets)


UNARY = ["exp", "tanh", "sigmoid", "relu", "neg", "sin", "square", "abs"]


@settings(max_examples=10, deadline=None)
@example(ops=[("exp", 1.0), ("exp", 2.0), ("exp", 1.0)], rows=2, cols=3, broadcast=False, transposed=True,
         dtype=G.float32)  # overflows to inf in float32
@given(ops=st.lists(st.tuples(st.sampled_from(UNARY + ["add", "mul", "sub", "scale", "div"]), st.floats(0.5, 2)),
                    min_size=1, max_size=7),
       rows=st.integers(1, 4), cols=st.integers(1, 6), broadcast=st.booleans(), transposed=st.booleans(),
       dtype=st.sampled_from([G.float32, G.float64]))
def test_random_pointwise_graphs_have_eager_gradients(ops: list[tuple[str, float]], rows: int, cols: int,
                                                      broadcast: bool, transposed: bool, dtype: G.dtype) -> None:
    def f(x: G.Tensor, b: G.Tensor) -> G.Tensor:
        y = x
        for name, c in ops:
            if name == "add":
                y = y + b
            elif name == "mul":
                y = y * b
            elif name == "sub":
                y = c - y
            elif name == "scale":
                y = y * c + x
            elif name == "div":
                y = y / (b * b + c)
            else:
                y = getattr(G, name)(y)
        return (y * y).sum()

    x = (G.randn(cols, rows, dtype=dtype).t() if transposed else G.randn(rows, cols, dtype=dtype))
    x.requires_grad_(True)
    b = G.randn(cols if broadcast else rows * cols, dtype=dtype)
    b = (b if broadcast else b.reshape(rows, cols)).requires_grad_(True)
    with np.errstate(all="ignore"):  # a chain of exps may overflow to inf (PyTorch's silent result) on both sides
        agree(f, (x, b), [], tol=1e-4 if dtype == G.float32 else 1e-9)


def test_outputs_that_do_not_require_grad_compile_without_a_backward() -> None:
    w = G.randn(3, requires_grad=True)
    c = G.compile(lambda x: ((x * w).detach() * 2).exp())
    x = G.randn(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = c(x)
        out = c(x)
    assert not out.requires_grad
    np.testing.assert_allclose(out.numpy(), np.exp(x.numpy() * w.detach().numpy() * 2), rtol=1e-6)
    (program,) = c.programs
    assert isinstance(program, TrainingProgram) and not program.backward.graph.nodes


def test_a_backward_that_autograd_refuses_runs_eagerly_with_the_reason() -> None:
    w = G.randn(3, requires_grad=True)

    def f(x: G.Tensor) -> G.Tensor:
        y = x * w
        z = y * y  # saves y
        y.add_(1)  # and modifies it: autograd refuses the backward
        return z

    c = G.compile(f)
    x = G.randn(3)
    with pytest.warns(RuntimeWarning, match="backward could not be captured"):
        out = c(x)
    np.testing.assert_allclose(out.detach().numpy(), (x * w).detach().numpy() ** 2, rtol=1e-6)
    assert not c.programs
