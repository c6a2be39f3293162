"""Lowered nodes of an attention block (runtime/compile/lowering.py, Note [Lowered nodes]): the batched
products, the chunk's slices, the transpose and matmul's same-shape expand run as NumPy on the arrays, and
a linear over a 3-d input as one GEMM; results and gradients agree with eager."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import generated as G
from runtime.compile.pyrun import _lowered
from runtime.compile.training import TrainingProgram

F = G.nn.functional


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_attention_runs_its_products_and_views_lowered() -> None:
    d = 16
    qkv, proj = G.nn.Linear(d, 3 * d), G.nn.Linear(d, d)
    params = list(qkv.parameters()) + list(proj.parameters())

    def attend(x: G.Tensor) -> G.Tensor:
        q, k, v = qkv(x).chunk(3, dim=-1)
        att = F.softmax(q @ k.transpose(-2, -1) * 0.25, dim=-1)
        return proj(att @ v) + x

    x = G.randn(3, 7, d, requires_grad=True)
    c = G.compile(attend)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):
            results = []
            for f in (c, attend):
                for p in [*params, x]:
                    p.grad = None
                out = f(x)
                out.backward(G.ones_like(out))
                results.append([out.detach().numpy().copy()] + [p.grad.numpy().copy() for p in [*params, x]])
            for got, want in zip(*results, strict=True):
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    (program,) = c.programs
    assert isinstance(program, TrainingProgram)
    seen = set()
    for part in (program.forward, program.backward):
        returned = {v.id for v in part.graph.output_values()}
        for node in part.graph.nodes:
            if node.name in ("bmm", "slice.Tensor", "transpose.int", "linear"):
                seen.add(node.name)
                assert _lowered(node, returned) is not None, f"{node.name} keeps its operator call"
    assert seen == {"bmm", "slice.Tensor", "transpose.int", "linear"}


def test_a_linear_over_a_non_contiguous_3d_input_keeps_its_layout() -> None:
    lin = G.nn.Linear(6, 4)
    x = G.randn(6, 5, 3).permute(2, 1, 0)  # (3, 5, 6), not contiguous
    c = G.compile(lambda t: lin(t) * 2.0)
    with G.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(c(x).numpy(), (lin(x) * 2.0).numpy(), rtol=1e-5, atol=1e-6)
        y = G.randn(3, 5, 6)
        np.testing.assert_allclose(c(y).numpy(), (lin(y) * 2.0).numpy(), rtol=1e-5, atol=1e-6)
