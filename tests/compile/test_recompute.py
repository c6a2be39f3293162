"""Rematerialization (runtime/compile/remat.py, Note [Recomputing saved values]): a compiled training graph
saves fewer forward values when the backward can compute them again in its fused kernels, and its results
and gradients stay those of eager autograd."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import generated as G
from runtime.compile import capture as capture_module
from runtime.compile.capture import capture
from runtime.compile.graph import Value
from runtime.compile.program import fusion_specs
from runtime.compile.remat import recomputable
from runtime.compile.training import TrainingProgram

F = G.nn.functional


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def saved_of(fn: Callable[..., G.Tensor], args: tuple[Any, ...], params: list[G.Tensor]) -> list[Value]:
    """Compile `fn`, check its output and gradients against eager over two calls, return what its forward
    program saves for the backward."""
    c = G.compile(fn)
    leaves = params + [a for a in args if isinstance(a, G.Tensor) and a.requires_grad]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):
            results = []
            for f in (c, fn):
                for p in leaves:
                    p.grad = None
                out = f(*args)
                out.backward(G.ones_like(out) * 0.5)
                results.append((out.detach().numpy().copy(), [p.grad.numpy().copy() for p in leaves]))
            (got, got_grads), (want, want_grads) = results
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
            for g, w in zip(got_grads, want_grads, strict=True):
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    (program,) = c.programs
    assert isinstance(program, TrainingProgram)
    return list(program.forward.graph.output[1])


def saved_bytes(values: list[Value]) -> int:
    return sum(math.prod(v.shape) * np.dtype(v.dtype.np).itemsize for v in values)


def without_recompute(monkeypatch: pytest.MonkeyPatch) -> None:
    real = capture_module.capture_joint
    monkeypatch.setattr("runtime.compile.capture_joint",
                        lambda fn, args, kwargs, recompute=None: real(fn, args, kwargs, None))


def test_tanh_gelu_saves_only_its_input() -> None:
    x = G.randn(4, 64, requires_grad=True)
    saved = saved_of(lambda t: F.gelu(t, approximate="tanh") * 1.5 + t, (x,), [])
    assert [v.shape for v in saved] == [(4, 64)], "the backward recomputes the GELU's intermediates from x"


def test_without_the_rule_the_gelu_saves_its_intermediates(monkeypatch: pytest.MonkeyPatch) -> None:
    without_recompute(monkeypatch)
    x = G.randn(4, 64, requires_grad=True)
    saved = saved_of(lambda t: F.gelu(t, approximate="tanh") * 1.5 + t, (x,), [])
    assert len(saved) > 1


@pytest.mark.parametrize("case", ["layer_norm", "softmax", "layer_norm_gelu", "sigmoid_chain"])
def test_chains_save_fewer_bytes_and_keep_eager_gradients(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    d = 16
    ln = G.nn.LayerNorm(d)
    lin = G.nn.Linear(d, d)
    fns = {
        "layer_norm": (lambda t: (ln(t) * 2.0).sigmoid() * ln(t), [ln]),
        "softmax": (lambda t: F.softmax(lin(t), dim=-1).exp() * t.tanh(), [lin]),
        "layer_norm_gelu": (lambda t: lin(F.gelu(ln(t), approximate="tanh")) + t, [ln, lin]),
        "sigmoid_chain": (lambda t: (t.sigmoid() * t).exp() * (t * 3.0).tanh(), []),
    }
    fn, modules = fns[case]
    params = [p for m in modules for p in m.parameters()]
    x = G.randn(3, 5, d, requires_grad=True)
    with_rule = saved_of(fn, (x,), params)
    with monkeypatch.context() as m:
        without_recompute(m)
        without = saved_of(fn, (x,), params)
    assert saved_bytes(with_rule) < saved_bytes(without)


def test_reductions_matmuls_and_random_ops_stay_saved() -> None:
    lin = G.nn.Linear(8, 8)
    x = G.randn(6, 8, requires_grad=True)

    def f(t: G.Tensor) -> G.Tensor:
        h = lin(t).tanh()  # the matmul's output is saved (tanh's backward reads tanh's output)
        return (h * h.sum(-1, keepdim=True)).exp()

    saved = saved_of(f, (x,), list(lin.parameters()))
    producers = {v.producer.name for v in saved if v.producer is not None}
    assert producers <= {"linear", "addmm", "mm", "sum.dim_IntList", "tanh", "exp", "mul.Tensor"}
    assert any(v.shape == (6, 1) for v in saved), "the reduction's result is saved, not recomputed"



def test_the_rule_refuses_random_reducing_matmul_and_writing_nodes() -> None:
    x, w = G.randn(6, 8), G.randn(8, 8)

    def f(t: G.Tensor) -> G.Tensor:
        a = F.dropout(t * 2.0, p=0.5, training=True)
        b = G.rand_like(t) + a.sum(-1, keepdim=True) + (t @ w)
        return b.add_(1.0).exp()

    graph, _, _ = capture(f, (x,), {})
    can = recomputable(fusion_specs())
    verdict = {n.name: can(n) for n in graph.nodes}
    assert verdict["mul.Scalar"] and verdict["exp"]
    refused = [name for name, ok in verdict.items() if not ok]
    assert "sum.dim_IntList" in refused and "add_.Scalar" in refused
    assert any(word in name for name in refused for word in ("dropout", "bernoulli"))
    assert any("mm" in name or "matmul" in name for name in refused)
    assert all(ok for name, ok in verdict.items() if name not in refused)
